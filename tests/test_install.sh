#!/usr/bin/env bash
# The installed library: `cmake --install` into a temporary prefix, then
#  - every file is where the README says (bin, lib, include, pkg-config, CMake
#    package, man page), and the man page renders without warnings;
#  - every exported symbol is vkimg_* (libvkimg.so) or vkimg_*/vki_* (libvkimg.a):
#    no stb, TurboJPEG, libdeflate or SPIR-V symbols;
#  - the usage example of include/vkimg/vkimg.h, compiled as it is written there
#    against the installed tree through pkg-config, runs a pipeline (validation
#    on) and writes the same bytes as the vkimg binary;
#  - a CMake project finds the package (find_package(vkimg)) and links both
#    vkimg::vkimg and vkimg::vkimg_static.
#
#   test_install.sh BUILD_DIR SOURCE_DIR [plain|sanitize]
# 'sanitize': the build is instrumented (VKIMG_SANITIZE): the consumers are compiled
# and linked with the same -fsanitize flags, and the instrumentation's own symbols
# (__asan_*, __odr_asan.*, __ubsan_*) are not counted as exports.
set -u
BUILD=${1:?usage: test_install.sh BUILD_DIR SOURCE_DIR [plain|sanitize]}
SRC=${2:?usage: test_install.sh BUILD_DIR SOURCE_DIR [plain|sanitize]}
MODE=${3:-plain}
SANFLAGS=
[ "$MODE" = sanitize ] && SANFLAGS="-fsanitize=address,undefined"
instr() { grep -v '^__odr_asan\|^__asan\|^___asan\|^__ubsan\|^__sancov' || true; }
T=$(mktemp -d "${TMPDIR:-/tmp}/vkimg-test-install.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { local n=$1; shift; if "$@"; then ok; else bad "$n"; fi; }

P=$T/prefix
if cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then ok; else bad "cmake --install: $(tail -3 "$T/install.log")"; fi
libdir=$(cd "$P" && ls -d lib* | head -1)
for f in bin/vkimg "$libdir/libvkimg.a" "$libdir/libvkimg.so" include/vkimg/vkimg.h "$libdir/pkgconfig/vkimg.pc" \
         "$libdir/cmake/vkimg/vkimgConfig.cmake" "$libdir/cmake/vkimg/vkimgConfigVersion.cmake" share/man/man1/vkimg.1; do
  check "installed $f" [ -e "$P/$f" ]
done
check "libvkimg.so has a SONAME" sh -c "objdump -p '$P/$libdir/libvkimg.so' | grep -q 'SONAME.*libvkimg.so.0'"
check "only the public header is installed" [ "$(find "$P/include" -type f | wc -l)" = 1 ]

# man page: renders, no warnings, documents every subcommand and op
man_warn=$(LC_ALL=C.UTF-8 MANWIDTH=100 groff -man -Tutf8 -ww -z "$P/share/man/man1/vkimg.1" 2>&1)
check "the man page renders without warnings ($man_warn)" [ -z "$man_warn" ]
LC_ALL=C.UTF-8 groff -man -Tutf8 "$P/share/man/man1/vkimg.1" 2>/dev/null | col -b >"$T/man.txt"
for w in "vkimg stats" "vkimg compare" "vkimg bench" "--quality" "--device" "--ssim" "EXIT STATUS" "blur" "sigma"; do
  check "the man page mentions $w" grep -q -- "$w" "$T/man.txt"
done
for op in $("$P/bin/vkimg" ops | awk '/^[a-z]/ {print $1}'); do
  check "the man page documents op $op" grep -q "^ *$op\b" "$T/man.txt"
done

# exported symbols
bad_so=$(nm -D --defined-only "$P/$libdir/libvkimg.so" | awk '{print $3}' | grep -v '^vkimg_' | grep -v '^_init$\|^_fini$' | instr)
check "libvkimg.so exports only vkimg_* (not: $(echo $bad_so | head -c 300))" [ -z "$bad_so" ]
check "libvkimg.so exports the API" sh -c "nm -D --defined-only '$P/$libdir/libvkimg.so' | grep -q ' vkimg_run$'"
bad_a=$(nm -g --defined-only "$P/$libdir/libvkimg.a" 2>/dev/null | awk 'NF == 3 {print $3}' | grep -v '^vkimg_\|^vki_' | instr)
check "libvkimg.a defines only vkimg_*/vki_* globals (not: $(echo $bad_a | head -c 300))" [ -z "$bad_a" ]

# the header's usage example, as written there
awk '/^ \* Example/ {on = 1; next} on && /^ \* Conventions/ {exit} on' "$P/include/vkimg/vkimg.h" |
  sed -n 's/^ \*     //p' >"$T/example.body"
check "the header has a usage example" grep -q vkimg_run "$T/example.body"
{
  grep '^#include' "$T/example.body"
  echo '#include <stdio.h>'
  echo 'int main(void)'
  echo '{'
  grep -v '^#include' "$T/example.body"
  echo '    return vkimg_ctx_validation_messages(NULL);'
  echo '}'
} >"$T/example.c"
export PKG_CONFIG_PATH=$P/$libdir/pkgconfig
if cc -std=c11 -Wall -Wextra -Werror $SANFLAGS -o "$T/example" "$T/example.c" $(pkg-config --cflags --libs vkimg) 2>"$T/cc.log"; then
  ok
else
  bad "the header's example does not build with pkg-config: $(head -c 600 "$T/cc.log")"
fi
cp "$SRC/images/landscape.png" "$T/in.png"
"$P/bin/vkimg" -i "$T/in.png" -o "$T/cli.png" -f "gray,blur=sigma=2" -q
if [ -x "$T/example" ]; then
  (cd "$T" && VKIMG_VALIDATE=1 LD_LIBRARY_PATH="$P/$libdir" ./example) >"$T/ex.log" 2>&1
  check "the example runs and writes out.png ($(head -c 300 "$T/ex.log"))" [ -s "$T/out.png" ]
  check "the example printed no error or validation message" [ ! -s "$T/ex.log" ]
  check "the example links the installed libvkimg.so" sh -c "LD_LIBRARY_PATH='$P/$libdir' ldd '$T/example' | grep -q '$P/$libdir/libvkimg.so'"
  check "the example's output equals the CLI's" cmp -s "$T/out.png" "$T/cli.png"
fi

# a CMake project that finds the package
mkdir -p "$T/proj"
cp "$T/example.c" "$T/proj/example.c"
cat >"$T/proj/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.20)
project(uses_vkimg C)
find_package(vkimg 0.2 REQUIRED)
add_executable(ex_shared example.c)
target_link_libraries(ex_shared PRIVATE vkimg::vkimg)
add_executable(ex_static example.c)
target_link_libraries(ex_static PRIVATE vkimg::vkimg_static)
EOF
if cmake -S "$T/proj" -B "$T/proj/build" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_FLAGS="$SANFLAGS" >"$T/cm.log" 2>&1 &&
   cmake --build "$T/proj/build" >>"$T/cm.log" 2>&1; then
  ok
  rm -f "$T/out.png"
  (cd "$T" && VKIMG_VALIDATE=1 ./proj/build/ex_static) >"$T/exs.log" 2>&1
  check "find_package: the statically linked example runs ($(head -c 300 "$T/exs.log"))" cmp -s "$T/out.png" "$T/cli.png"
  check "the static example needs no libvkimg.so" sh -c "! ldd '$T/proj/build/ex_static' | grep -q 'libvkimg\.so'"
else
  bad "find_package(vkimg) project: $(tail -c 800 "$T/cm.log")"
fi

echo "test_install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
