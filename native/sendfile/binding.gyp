{
  "targets": [
    {
      "target_name": "sendfile_range",
      "sources": ["sendfile_range.c", "sender_thread.c"],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"],
      "cflags": ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-pthread"],
      "ldflags": ["-pthread"]
    }
  ]
}
