#!/usr/bin/env bash
# Faults: a full disk (a small tmpfs where this can mount one, and the writer's
# test-only ENOSPC fault always), a lost device and device memory running out
# (test-only faults: VKIMG_TEST_FAULT), interruptions (SIGINT, SIGTERM, kill -9
# at varied moments of a batch, with O_TMPFILE and with named temporary files) and
# two writers racing for one output. Every time: exit 1 (or the signal), a
# message naming the file, no temporary file left, every output either its old
# self or a whole new image, never written from undefined memory.
#   test_faults.sh /path/to/vkimg /path/to/source
set -u
. "$(dirname "$0")/lib.sh"
vk=$1 src=$2
check() { check_eval "$@"; }

need_device "$vk"
t=$(mktemp -d /tmp/vkimg-faults.XXXXXX)
mnt=
cleanup() { [ -n "$mnt" ] && umount "$mnt" 2>/dev/null; rm -rf "$t"; }
trap cleanup EXIT
temps() { find "$1" -name '.*.vkimg-*' | wc -l; }
# every file in a directory is a whole image (vkimg reads it back)
all_whole() { local f; for f in "$1"/*; do [ -e "$f" ] || continue; "$vk" stats "$f" >/dev/null 2>&1 || { echo "torn: $f" >&2; return 1; }; done; }

mkdir -p "$t/in" "$t/out"
"$vk" -q -i "$src/images/landscape.png" -o "$t/big.png" -f "resize=300%" || bad "making the big input"
for i in 1 2 3 4 5 6 7 8; do cp "$t/big.png" "$t/in/p$i.png"; done

# ---- full disk: the writer's ENOSPC fault
printf 'old contents' >"$t/out/keep.png"
err=$(VKIMG_TEST_FAULT=enospc:5000 "$vk" -i "$src/images/landscape.png" -o "$t/out/keep.png" -f gray 2>&1)
check "ENOSPC: exit 1" '[ $? -eq 1 ]'
check "ENOSPC: the message names the file and the reason" 'printf "%s" "$err" | grep -q "keep.png: cannot write: No space left on device"'
check "ENOSPC: one line" '[ $(printf "%s\n" "$err" | wc -l) -eq 1 ]'
check "ENOSPC: the existing output untouched" '[ "$(cat "$t/out/keep.png")" = "old contents" ]'
check "ENOSPC: no temporary file" '[ $(temps "$t/out") -eq 0 ]'
err=$(VKIMG_TEST_FAULT=no-tmpfile:1 "$vk" -i "$src/images/landscape.png" -o "$t/out/named.png" -f gray 2>&1)
check "named temporary file (no O_TMPFILE): written" '[ $? -eq 0 ] && "$vk" stats "$t/out/named.png" >/dev/null'
check "named temporary file: none left" '[ $(temps "$t/out") -eq 0 ]'

# ---- full disk: a real one (a 256 KiB tmpfs), where mounting is allowed
mkdir -p "$t/small"
if mount -t tmpfs -o size=256k tmpfs "$t/small" 2>/dev/null; then
  mnt="$t/small"
  printf 'old contents' >"$mnt/keep.png"
  err=$("$vk" -i "$t/big.png" -o "$mnt/keep.png" -f copy 2>&1)
  check "tmpfs full: exit 1" '[ $? -eq 1 ]'
  check "tmpfs full: the message names the file" 'printf "%s" "$err" | grep -q "keep.png: cannot write: No space left on device"'
  check "tmpfs full: the existing output untouched" '[ "$(cat "$mnt/keep.png")" = "old contents" ]'
  check "tmpfs full: no temporary file, no space held" '[ $(temps "$mnt") -eq 0 ] && [ $(du -sk "$mnt" | cut -f1) -lt 64 ]'
  rm -f "$mnt/keep.png"
  err=$("$vk" -i "$t/in/*.png" -o "$mnt/{stem}.png" -f copy 2>&1)
  check "tmpfs full, batch: exit 1" '[ $? -eq 1 ]'
  check "tmpfs full, batch: every file named" '[ $(printf "%s\n" "$err" | grep -c "No space left on device") -eq 8 ]'
  check "tmpfs full, batch: nothing torn, no temporary file" 'all_whole "$mnt" && [ $(temps "$mnt") -eq 0 ]'
  umount "$mnt" && mnt=
else
  echo "note: cannot mount a tmpfs here: the full-disk case ran with the ENOSPC fault only" >&2
fi

# ---- a lost device, device memory running out: exit 1, every file named, nothing written
# (oom counts allocations: the buffer pool makes later images of one size allocate none)
for fault in device-lost:1 device-lost:3 oom:1 oom:2; do
  rm -rf "$t/out"/*
  err=$(VKIMG_TEST_FAULT=$fault "$vk" -i "$t/in/p[1-4].png" -o "$t/out/{stem}.png" -f "gray,blur=2" --threads 1 2>&1)
  check "$fault: exit 1" '[ $? -eq 1 ]'
  want=$([ "${fault%%:*}" = oom ] && echo VK_ERROR_OUT_OF_DEVICE_MEMORY || echo VK_ERROR_DEVICE_LOST)
  nfail=$(printf "%s\n" "$err" | grep -c "$want")
  check "$fault: the Vulkan error named, with the file ($nfail)" 'printf "%s\n" "$err" | grep "$want" | grep -q "/in/p[1-4].png"'
  # the first K-1 runs succeed, the rest fail; a failed one writes nothing
  k=${fault##*:}
  check "$fault: only whole outputs" 'all_whole "$t/out" && [ $(temps "$t/out") -eq 0 ]'
  check "$fault: no output for a failed file" '[ $(ls "$t/out" | wc -l) -eq $((4 - nfail)) ]'
done

# ---- interruptions at varied moments: SIGINT, SIGTERM, kill -9; O_TMPFILE and named
n=0
for sig in INT TERM KILL; do
  for named in 0 1; do
    for delay in 0.05 0.3 0.8; do
      n=$((n + 1))
      rm -rf "$t/out"/*
      if [ $named = 1 ]; then
        VKIMG_TEST_FAULT=no-tmpfile:1 "$vk" -q -i "$t/in/*.png" -o "$t/out/{stem}.png" -f "blur=3" &
      else
        "$vk" -q -i "$t/in/*.png" -o "$t/out/{stem}.png" -f "blur=3" &
      fi
      pid=$!
      sleep $delay
      kill -$sig $pid 2>/dev/null
      wait $pid 2>/dev/null
      left=$(temps "$t/out")
      if [ "$sig" = KILL ] && [ $named = 1 ]; then
        # named temporary files cannot be cleaned up after kill -9: this is why O_TMPFILE is used
        check "kill -9 (named temporaries, $delay s): outputs whole" 'all_whole "$t/out"'
      else
        check "SIG$sig (named=$named, $delay s): no temporary file ($left)" '[ $left -eq 0 ]'
        check "SIG$sig (named=$named, $delay s): outputs whole" 'all_whole "$t/out"'
      fi
    done
  done
done

# ---- --file-timeout: a file that takes too long stops the run: exit 1, named, nothing partial
rm -rf "$t/out"/*
err=$("$vk" -i "$t/in/*.png" -o "$t/out/{stem}.png" -f "blur=3" --threads 2 --file-timeout 0.01 2>&1)
check "--file-timeout: exit 1" '[ $? -eq 1 ]'
check "--file-timeout: the file named" 'printf "%s" "$err" | grep -q "/in/p[0-9].png: not done after 0.01 s (--file-timeout)"'
check "--file-timeout: outputs whole, no temporary file" 'all_whole "$t/out" && [ $(temps "$t/out") -eq 0 ]'
"$vk" -q -i "$t/in/p1.png" -o "$t/out/ok.png" -f gray --file-timeout 600
check "--file-timeout not reached: exit 0" '[ $? -eq 0 ] && [ -f "$t/out/ok.png" ]'
err=$("$vk" -i "$t/in/p1.png" -o "$t/out/x.png" -f gray --file-timeout -1 2>&1)
check "--file-timeout -1: usage error" '[ $? -eq 2 ]'

# ---- two writers racing for one output: it ends as one of their whole results
"$vk" -q -i "$t/big.png" -o "$t/ref_gray.png" -f gray
"$vk" -q -i "$t/big.png" -o "$t/ref_blur.png" -f "blur=1"
for i in 1 2 3 4 5 6; do
  rm -f "$t/out/race.png"
  "$vk" -q -i "$t/big.png" -o "$t/out/race.png" -f gray &
  p1=$!
  "$vk" -q -i "$t/big.png" -o "$t/out/race.png" -f "blur=1" &
  p2=$!
  wait $p1; r1=$?
  wait $p2; r2=$?
  check "race $i: both exit 0" '[ $r1 -eq 0 ] && [ $r2 -eq 0 ]'
  check "race $i: one writer's whole result" 'cmp -s "$t/out/race.png" "$t/ref_gray.png" || cmp -s "$t/out/race.png" "$t/ref_blur.png"'
  check "race $i: no temporary file" '[ $(temps "$t/out") -eq 0 ]'
done

echo "test_faults: $pass passed, $fail failed"
[ $fail -eq 0 ]
