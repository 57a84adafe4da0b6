# Installs playwright-core (pinned by package-lock.json) into the build tree for the browser
# tests: copies package.json and package-lock.json to WORK and runs `npm ci` there, unless
# WORK already holds the modules of this very lock file. A missing npm is an error (the
# test fails, it is not skipped): scripts/setup.sh installs it.
#   cmake -DSRC=tests/browser -DWORK=BUILD/tests/browser -DNPM=npm -P npm_ci.cmake
foreach(var SRC WORK NPM)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "" OR "${${var}}" MATCHES "NOTFOUND$")
    message(FATAL_ERROR "npm_ci.cmake: ${var} is not set (is npm installed? run scripts/setup.sh)")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK}")
file(SHA256 "${SRC}/package-lock.json" lock_hash)
set(stamp "${WORK}/node_modules/.callmon-lock-${lock_hash}")
if(EXISTS "${stamp}")
  return()
endif()
file(COPY "${SRC}/package.json" "${SRC}/package-lock.json" DESTINATION "${WORK}")
execute_process(COMMAND "${NPM}" ci --no-audit --no-fund --loglevel=error
                WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci failed in ${WORK} (status ${rc})")
endif()
file(TOUCH "${stamp}")
