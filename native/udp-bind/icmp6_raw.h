/* icmp6_raw — an interface-bound raw ICMPv6 socket for router advertisements (see icmp6_raw.c). */
#ifndef RACKSIDE_ICMP6_RAW_H
#define RACKSIDE_ICMP6_RAW_H
#include <node_api.h>

/* Adds openIcmp6, sendIcmp6 and closeIcmp6 to the addon's exports. */
void icmp6_raw_register(napi_env env, napi_value exports);

#endif
