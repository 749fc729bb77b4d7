# Turns a .cu file into a .cc defining cutune::kernels::embedded::<VAR> as a std::string_view
# over a raw string literal. Run as: cmake -DINPUT=.. -DOUTPUT=.. -DVAR=.. -P embed.cmake
# With -DFORMAT=cu instead of VAR it writes the source text alone (scripts/kernel_identity.sh).
#
# NVRTC has no file system, and clients receive the source as text, so the embedded source must
# stand alone: each `#include "NAME"` line naming a file next to INPUT (kernels/common.cuh) is
# replaced by that file's text between #line directives, so diagnostics still name the right file
# and line. The header is thereby part of every source that includes it, and of its source_hash().
# One level only: an inlined file may not itself include a file of ours.
file(READ "${INPUT}" text)
get_filename_component(input_dir "${INPUT}" DIRECTORY)
get_filename_component(input_name "${INPUT}" NAME)

string(REGEX MATCHALL "(^|\n)#include \"[^\"\n]+\"" include_lines "${text}")
foreach(include_line IN LISTS include_lines)
  string(REGEX REPLACE "^\n" "" include_line "${include_line}")
  string(REGEX REPLACE "^#include \"([^\"]+)\"$" "\\1" header "${include_line}")
  if(NOT EXISTS "${input_dir}/${header}")
    message(FATAL_ERROR "${INPUT} includes ${header}, which is not in ${input_dir}")
  endif()
  string(FIND "${text}" "${include_line}" at)
  string(FIND "${text}" "${include_line}" last REVERSE)
  if(NOT at EQUAL last)
    message(FATAL_ERROR "${INPUT} includes ${header} more than once")
  endif()
  file(READ "${input_dir}/${header}" header_text)
  if(header_text MATCHES "(^|\n)#include \"")
    message(FATAL_ERROR "${header} (inlined into ${INPUT}) includes a file itself")
  endif()
  if(NOT header_text MATCHES "\n$")
    string(APPEND header_text "\n")
  endif()
  # The include's line number is the newlines before it plus one; #line names the next line.
  string(SUBSTRING "${text}" 0 ${at} before)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines line)
  math(EXPR next_line "${line} + 2")
  string(REPLACE "${include_line}"
    "// ${include_line}: inlined by kernels/embed.cmake\n#line 1 \"${header}\"\n${header_text}#line ${next_line} \"${input_name}\""
    text "${text}")
endforeach()

if(FORMAT STREQUAL "cu")
  file(WRITE "${OUTPUT}" "${text}")
  return()
endif()

set(delimiter "cutune_src")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delimiter}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by kernels/embed.cmake; do not edit.\n"
  "#include \"kernels/embedded.h\"\n\n"
  "namespace cutune::kernels::embedded {\n\n"
  "const std::string_view ${VAR} = R\"${delimiter}(${text})${delimiter}\";\n\n"
  "}  // namespace cutune::kernels::embedded\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
