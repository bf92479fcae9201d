# cmake -DIN=x.spv -DOUT=x.spv.h -DNAME=x -P spv2h.cmake
# Writes the SPIR-V words of IN as `static const uint32_t vki_spv_NAME[]`: each
# shader is embedded in the one file that uses it, and no symbol is exported.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR rem "${n} % 8")
if(NOT rem EQUAL 0 OR n EQUAL 0)
  message(FATAL_ERROR "${IN}: not a SPIR-V module (${n} hex digits)")
endif()
# little-endian bytes -> 32-bit words
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "(0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,0x[0-9a-f]+u,)" "\\1\n" words "${words}")
file(WRITE "${OUT}.tmp" "/* generated from ${NAME}.comp by cmake/spv2h.cmake */\n#include <stdint.h>\nstatic const uint32_t vki_spv_${NAME}[] = {\n${words}\n};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
