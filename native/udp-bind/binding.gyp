{
  "targets": [
    {
      "target_name": "udp_bind",
      "sources": ["udp_bind.c", "udp_connected.c", "tftp_pump.c", "icmp6_raw.c", "polled_fd.c"],
      "libraries": ["-lm", "-lpthread"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"],
      "cflags": ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2"]
    }
  ]
}
