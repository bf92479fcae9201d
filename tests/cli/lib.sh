# Shared by the CLI tests (sourced): the counters, the checks, the device rule
# and the summary line.
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# check_eval DESCRIPTION 'shell test': passes when the test (evaluated) succeeds
check_eval() { if eval "$2"; then ok; else bad "$1"; fi; }
# check_run DESCRIPTION COMMAND...: passes when the command succeeds
check_run() {
  local d=$1
  shift
  if "$@"; then ok; else bad "$d"; fi
}
# run_expect WANT DESCRIPTION -- ARGS...: runs "$V" ARGS (stdout -> $T/out, stderr ->
# $T/err; V and T set by the test) and passes when it exits WANT
run_expect() {
  local want=$1 d=$2
  shift 3
  "$V" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else
    bad "$d: exit $rc, want $want ($(head -c 300 "$T/err"))"
  fi
}
# need_device VKIMG: exit 77 (skipped) without a Vulkan device, 1 where CI asks
# for one (VKIMG_REQUIRE_DEVICE=1)
need_device() {
  "$1" devices >/dev/null 2>&1 && return 0
  echo "no Vulkan device" >&2
  [ "${VKIMG_REQUIRE_DEVICE:-0}" != 0 ] && exit 1
  exit 77
}
# finish NAME: the summary line; the exit status says whether all passed
finish() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
