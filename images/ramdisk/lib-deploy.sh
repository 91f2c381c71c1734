#!/bin/sh
# rackside ramdisk agent: deploy. Sourced by rackside-agent.sh (functions only).
# The image is streamed over plain HTTP with busybox nc (busybox wget treats a 206 answer to a
# Range header it did not generate itself as an error, so it cannot resume into a pipe), or over
# HTTPS with curl when rackside.url is https:// (verified against the CA, never falling back), hashed
# while it is written (tee into a FIFO read by md5sum/sha256sum/sha512sum), and resumed with
# "Range: bytes=N-" after a cut connection, so the hash covers one continuous stream. A wrong
# checksum or a failed download zeroes the first and last MiB of the disk (partition tables, boot
# code, the GPT backup) so the host never boots half an image. The config drive goes into a new
# partition at the end of the disk (GPT backup header moved to the disk's end first), as
# ironic-python-agent does.

# zero_ends DEVICE BYTES: zeroes the first and the last MiB.
zero_ends() {
  mib=$(( $2 / 1048576 ))
  dd if=/dev/zero of="$1" bs=1048576 count=1 conv=notrunc 2>/dev/null
  [ "$mib" -gt 1 ] && dd if=/dev/zero of="$1" bs=1048576 seek=$(( mib - 1 )) count=1 conv=notrunc 2>/dev/null
  sync
}

# http_body OFFSET: reads an HTTP/1.0 response on stdin and writes its body from OFFSET on
# stdout. The status code goes to ${RUN}/http.status, the full length to ${RUN}/http.total.
http_body() {
  cr=$(printf '\r')
  status=
  IFS= read -r status || { echo 000 > "${RUN}/http.status"; return 1; }
  status=${status%"$cr"}
  code=$(printf '%s' "$status" | cut -d ' ' -f 2)
  echo "$code" > "${RUN}/http.status"
  range=
  length=
  while IFS= read -r line; do
    line=${line%"$cr"}
    [ -z "$line" ] && break
    value=$(printf '%s' "${line#*:}" | sed -e 's/^[[:space:]]*//')
    case "$(printf '%s' "${line%%:*}" | tr '[:upper:]' '[:lower:]')" in
      content-range) range=$value ;;
      content-length) length=$value ;;
    esac
  done
  case "$code" in
    206)
      start=${range#bytes }
      start=${start%%-*}
      echo "${range##*/}" > "${RUN}/http.total"
      [ "$start" = "$1" ] || { echo "server resumed at ${start} instead of ${1}" > "${RUN}/http.error"; return 1; }
      cat
      ;;
    200)
      echo "$length" > "${RUN}/http.total"
      if [ "$1" -gt 0 ]; then tail -c +$(( $1 + 1 )); else cat; fi
      ;;
    *) return 1 ;;
  esac
}

# http_get URL OFFSET: writes the body of URL from OFFSET on stdout (https:// goes to https_get). The
# bearer token is sent only to rackside's own URL. Each attempt is bounded by ATTEMPT_SECONDS.
# busybox nc half-closes the connection when its stdin ends, and some servers (Node's among
# them) then drop a response still being streamed, so the request side stays open until the
# body has been read (${RUN}/http.done).
http_get() {
  case "$1" in https://*) https_get "$1" "$2"; return ;; esac
  rest=${1#http://}
  hostport=${rest%%/*}
  path=/${rest#*/}
  [ "$rest" = "$hostport" ] && path=/
  host=${hostport%:*}
  port=${hostport##*:}
  [ "$port" = "$hostport" ] && port=80
  auth=
  case "$1" in "${URL}"/*) auth=$TOKEN ;; esac
  rm -f "${RUN}/http.done"
  {
    printf 'GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: rackside-ramdisk\r\nConnection: close\r\n' "$path" "$hostport"
    [ "$2" -gt 0 ] && printf 'Range: bytes=%s-\r\n' "$2"
    [ -n "$auth" ] && printf 'Authorization: Bearer %s\r\n' "$auth"
    printf '\r\n'
    while [ ! -e "${RUN}/http.done" ]; do sleep 1; done
  } | timeout "$ATTEMPT_SECONDS" nc -w 10 "$host" "$port" 2>/dev/null | {
    http_body "$2"
    ok=$?
    : > "${RUN}/http.done"
    return "$ok"
  }
}

# https_get URL OFFSET: http_get over TLS, with curl verifying the server against ${CA}. `curl -i`
# writes the status line and headers before the body, which http_body reads as it reads nc's
# stream. --speed-time stands for nc -w: an attempt stalled for 10 s ends, and the stream resumes.
https_get() {
  auth=
  case "$1" in "${URL}"/*) auth="Authorization: Bearer ${TOKEN}" ;; esac
  range=
  [ "$2" -gt 0 ] && range="Range: bytes=${2}-"
  timeout "$ATTEMPT_SECONDS" curl -sS -i --http1.1 --proto =https --cacert "$CA" --connect-timeout 10 \
    --speed-limit 1 --speed-time 10 -A rackside-ramdisk ${auth:+-H "$auth"} ${range:+-H "$range"} "$1" 2>> "${RUN}/agent.log" | http_body "$2"
}

# fetch_url_ok URL: true when URL is http:// or https:// with rackside.url's scheme: after an
# HTTPS boot nothing is fetched in clear text.
fetch_url_ok() {
  case "$1" in http://*|https://*) [ "${1%%://*}" = "${URL%%://*}" ] ;; *) return 1 ;; esac
}

# stream_image URL: the whole image on stdout as one stream, resuming after a cut connection
# (up to MAX_ATTEMPTS attempts without progress). Outcome in ${RUN}/stream.result:
# "ok BYTES ATTEMPTS" or "error MESSAGE".
stream_image() {
  got=0
  attempts=0
  stalled=0
  total=$IMAGE_SIZE
  rm -f "${RUN}/count.fifo" "${RUN}/http.total" "${RUN}/http.error"
  mkfifo "${RUN}/count.fifo"
  while :; do
    attempts=$((attempts + 1))
    wc -c < "${RUN}/count.fifo" > "${RUN}/count" &
    counter=$!
    http_get "$1" "$got" | tee "${RUN}/count.fifo"
    wait "$counter"
    n=$(tr -d ' ' < "${RUN}/count")
    got=$((got + ${n:-0}))
    code=$(cat "${RUN}/http.status" 2>/dev/null)
    [ -n "$total" ] || total=$(cat "${RUN}/http.total" 2>/dev/null)
    case "$code" in
      200|206) ;;
      000|'') ;; # connection failed or cut before the status line: retry
      *) echo "error GET ${1} answered HTTP ${code}" > "${RUN}/stream.result"; return 1 ;;
    esac
    if [ -n "$total" ] && [ "$got" -ge "$total" ]; then
      echo "ok ${got} ${attempts}" > "${RUN}/stream.result"
      return 0
    fi
    if [ "${n:-0}" -gt 0 ]; then stalled=0; else stalled=$((stalled + 1)); fi
    if [ "$stalled" -ge "$MAX_ATTEMPTS" ]; then
      echo "error GET ${1} failed ${stalled} times in a row at byte ${got} of ${total:-unknown} (last status ${code:-none})" > "${RUN}/stream.result"
      return 1
    fi
    say "deploy: connection cut at byte ${got} of ${total:-unknown}; resuming (attempt $((attempts + 1)))" >&2
    sleep 1
  done
}

# add_config_drive DEVICE DISK_BYTES FILE: appends a partition at the end of the disk and writes
# FILE into it; prints "START_BYTES SIZE_BYTES".
add_config_drive() {
  sfdisk=$(host_tool sfdisk) || { echo "sfdisk is not in the ramdisk" >&2; return 1; }
  label=$("$sfdisk" -d "$1" 2>/dev/null | sed -n 's/^label: //p')
  sectors=$(( $2 / 512 ))
  cd_bytes=$(wc -c < "$3")
  cd_mib=$(( (cd_bytes + 1048575) / 1048576 ))
  cd_sectors=$(( cd_mib * 2048 ))
  case "$label" in
    gpt)
      "$sfdisk" -q --relocate gpt-bak-std "$1" >&2 || return 1
      last=$(( sectors - 34 ))
      spec="type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=config-2"
      ;;
    dos) last=$sectors; spec="type=83" ;;
    *) echo "the image has no partition table (GPT or MBR) to add the config drive partition to" >&2; return 1 ;;
  esac
  start=$(( (last - cd_sectors) / 2048 * 2048 ))
  used=$("$sfdisk" -d "$1" 2>/dev/null | sed -n 's/.*start= *\([0-9]*\), size= *\([0-9]*\).*/\1 \2/p' | while read -r s z; do echo $((s + z)); done | sort -n | tail -n 1)
  if [ "$start" -lt "${used:-0}" ]; then
    echo "no room for a ${cd_bytes}-byte config drive after the image's last partition (sector ${used})" >&2
    return 1
  fi
  printf 'start=%s, size=%s, %s\n' "$start" "$cd_sectors" "$spec" | "$sfdisk" -q --append "$1" >&2 || return 1
  dd if="$3" of="$1" bs=512 seek="$start" conv=notrunc 2>/dev/null || return 1
  blockdev --rereadpt "$1" 2>/dev/null
  echo "$(( start * 512 )) $(( cd_sectors * 512 ))"
}

# deploy_fail ID MESSAGE DEVICE BYTES: wipes the disk's ends (when a device is given) and reports.
deploy_fail() {
  if [ -n "$3" ]; then
    zero_ends "$3" "$4"
    say "deploy: zeroed the first and last MiB of ${3}: it will not boot a partial image"
  fi
  say "deploy: FAILED: $2"
  report_result "$1" deploy error "$2"
}

cmd_deploy() { # ID
  url=$(answer image_url)
  want=$(norm "$(answer image_checksum)")
  algo=$(answer image_checksum_type)
  IMAGE_SIZE=$(answer image_size_bytes)
  MAX_ATTEMPTS=$(answer image_attempts)
  ATTEMPT_SECONDS=$(answer image_attempt_timeout_seconds)
  case "$MAX_ATTEMPTS" in ''|*[!0-9]*) MAX_ATTEMPTS=5 ;; esac
  case "$ATTEMPT_SECONDS" in ''|*[!0-9]*) ATTEMPT_SECONDS=3600 ;; esac
  case "$IMAGE_SIZE" in *[!0-9]*) IMAGE_SIZE= ;; esac
  fetch_url_ok "$url" || { deploy_fail "$1" "image_url must be a ${URL%%://*}:// URL like rackside.url, got ${url:-nothing}"; return; }
  case "$algo" in md5|sha256|sha512) ;; *) deploy_fail "$1" "image_checksum_type must be md5, sha256 or sha512, got ${algo:-nothing}"; return ;; esac
  [ -n "$want" ] || { deploy_fail "$1" "image_checksum is missing"; return; }

  if [ "$(answer raid_root)" = 1 ]; then
    disk=md0
    [ -e "${DEV}/md0" ] || { deploy_fail "$1" "raid_root=1 but /dev/md0 does not exist: run the raid command first"; return; }
    disk_bytes=$(( $(read_file "${SYSFS}/block/md0/size") * 512 ))
  else
    if ! disk=$(pick_disk hint_ 2> "${RUN}/candidates"); then
      deploy_fail "$1" "no disk matches the root device hints ($(hints_text hint_)); candidates: $(cat "${RUN}/candidates")"
      return
    fi
    disk_bytes=$(disk_attr "$disk" size)
  fi
  dev="${DEV}/${disk}"

  cd_url=$(answer configdrive_url)
  reserve=0
  if [ -n "$cd_url" ]; then
    fetch_url_ok "$cd_url" || { deploy_fail "$1" "configdrive_url must be a ${URL%%://*}:// URL like rackside.url, got ${cd_url}"; return; }
    rm -f "${RUN}/configdrive.img"
    IMAGE_SIZE_SAVED=$IMAGE_SIZE
    IMAGE_SIZE=
    if ! stream_image "$cd_url" > "${RUN}/configdrive.img"; then
      deploy_fail "$1" "config drive: $(cut -d ' ' -f 2- "${RUN}/stream.result")"
      return
    fi
    IMAGE_SIZE=$IMAGE_SIZE_SAVED
    cd_want=$(norm "$(answer configdrive_sha256)")
    if [ -n "$cd_want" ] && [ "$(sha256sum < "${RUN}/configdrive.img" | cut -d ' ' -f 1)" != "$cd_want" ]; then
      deploy_fail "$1" "config drive from ${cd_url} does not match its sha256 ${cd_want}"
      return
    fi
    reserve=$(( ($(wc -c < "${RUN}/configdrive.img") + 1048575) / 1048576 * 1048576 + 1048576 ))
  fi
  if [ -n "$IMAGE_SIZE" ] && [ $(( IMAGE_SIZE + reserve )) -gt "$disk_bytes" ]; then
    deploy_fail "$1" "the image (${IMAGE_SIZE} bytes) and config drive (${reserve} bytes) do not fit /dev/${disk} (${disk_bytes} bytes)"
    return
  fi

  say "deploy: writing ${url} to /dev/${disk} ($(describe_disk "$disk"))"
  started=$(read_uptime)
  zero_ends "$dev" "$disk_bytes"
  rm -f "${RUN}/hash.fifo" "${RUN}/hash.out" "${RUN}/stream.result"
  mkfifo "${RUN}/hash.fifo"
  "${algo}sum" < "${RUN}/hash.fifo" > "${RUN}/hash.out" &
  hasher=$!
  stream_image "$url" | tee "${RUN}/hash.fifo" | dd of="$dev" bs=1048576 conv=notrunc 2>/dev/null
  wait "$hasher"
  sync
  outcome=$(cat "${RUN}/stream.result" 2>/dev/null)
  case "$outcome" in
    ok\ *) ;;
    *) deploy_fail "$1" "${outcome#error }" "$dev" "$disk_bytes"; return ;;
  esac
  # shellcheck disable=SC2086 # split "ok BYTES ATTEMPTS" into words
  set -- "$1" $outcome
  written=$3
  attempts=$4
  have=$(cut -d ' ' -f 1 "${RUN}/hash.out")
  if [ "$have" != "$want" ]; then
    deploy_fail "$1" "checksum mismatch for ${url}: expected ${algo} ${want}, got ${have} over ${written} bytes" "$dev" "$disk_bytes"
    return
  fi
  if [ -n "$IMAGE_SIZE" ] && [ "$written" -ne "$IMAGE_SIZE" ]; then
    deploy_fail "$1" "wrote ${written} bytes but the image has ${IMAGE_SIZE}" "$dev" "$disk_bytes"
    return
  fi
  say "deploy: ${written} bytes written in ${attempts} attempt(s), ${algo} verified"
  cd_json=null
  if [ -n "$cd_url" ]; then
    if ! placed=$(add_config_drive "$dev" "$disk_bytes" "${RUN}/configdrive.img" 2>> "${RUN}/agent.log"); then
      deploy_fail "$1" "could not add the config drive partition: $(tail -n 1 "${RUN}/agent.log")" "$dev" "$disk_bytes"
      return
    fi
    # shellcheck disable=SC2086 # split "START SIZE" into words
    set -- "$1" $placed
    cd_json=$(printf '{"offset_bytes":%s,"size_bytes":%s}' "$2" "$3")
    say "deploy: config drive partition at byte ${2} (${3} bytes)"
  fi
  sync
  finished=$(read_uptime)
  details=$(printf '{"root_device":%s,"image":{"url":%s,"bytes":%s,"checksum_type":%s,"checksum":%s,"attempts":%s},"config_drive":%s,"duration_seconds":%s}' \
    "$(disk_json "$disk")" "$(json_str "$url")" "$written" "$(json_str "$algo")" "$(json_str "$have")" "$attempts" "$cd_json" "$(( finished - started ))")
  say "deploy: done"
  report_result "$1" deploy ok "" "$details"
}

# hints_text PREFIX: the hints of the command as "key=value, …" for messages.
hints_text() {
  out=
  for key in $HINT_KEYS; do
    v=$(answer "$1$key")
    [ -n "$v" ] && out="${out}${out:+, }${key}=${v}"
  done
  printf '%s' "${out:-none}"
}
