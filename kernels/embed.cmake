# Turns a .cu file into a .cc defining cutune::kernels::embedded::<VAR> as a std::string_view
# over a raw string literal. Run as: cmake -DINPUT=.. -DOUTPUT=.. -DVAR=.. -P embed.cmake
file(READ "${INPUT}" text)
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
