/* tftp_pump — the sending phase of TFTP read transfers on a thread of its own (see tftp_pump.c). */
#ifndef RACKSIDE_TFTP_PUMP_H
#define RACKSIDE_TFTP_PUMP_H
#include <node_api.h>

/* Adds pumpStart, pumpProgress and pumpCancel to the addon's exports. */
void tftp_pump_register(napi_env env, napi_value exports);

#endif
