/* udp_connected — connected UDP sockets with batched sends (see udp_connected.c). */
#ifndef RACKSIDE_UDP_CONNECTED_H
#define RACKSIDE_UDP_CONNECTED_H
#include <node_api.h>

/* Adds openConnected, closeConnected and sendBatch to the addon's exports. */
void udp_connected_register(napi_env env, napi_value exports);

/*
 * Lends an open connected-socket handle to another thread (tftp_pump.c): stops polling it on
 * the event loop and returns a duplicate of its descriptor (the borrower closes it), with
 * `*gso_usable` set to whether segmentation offload still works on its route. Returns -1 with
 * a JS exception pending when the handle is not an open socket or is already lent. Closing the
 * handle while lent is safe: the duplicate keeps the socket alive until the borrower closes it.
 */
int udp_connected_lend(napi_env env, napi_value handle, int* gso_usable);

/*
 * Ends a loan: polling resumes (datagrams that arrived meanwhile are read then) and a route the
 * borrower found unable to segment (`gso_usable` 0) is remembered. No-op when not lent.
 */
void udp_connected_resume(napi_env env, napi_value handle, int gso_usable);

#endif
