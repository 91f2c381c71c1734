/* udp_connected — connected UDP sockets with batched sends (see udp_connected.c). */
#ifndef RACKSIDE_UDP_CONNECTED_H
#define RACKSIDE_UDP_CONNECTED_H
#include <node_api.h>

/* Adds openConnected, closeConnected and sendBatch to the addon's exports. */
void udp_connected_register(napi_env env, napi_value exports);

#endif
