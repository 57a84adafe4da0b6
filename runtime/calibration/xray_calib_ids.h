/* The XRay calibration's function ids (xray_calib.S, calibration.cpp): the last
 * CALLMON_XRAY_CALIB_IDS entries of callmon_xray_fns, which the sled patcher never hands out
 * (xray_sleds.cpp, kMaxIds). Plain defines: included by C++ and by the assembler. */
#pragma once

#define CALLMON_XRAY_CALIB_ID0 4194296 /* (1 << 22) - 8 */
#define CALLMON_XRAY_CALIB_IDS 8
