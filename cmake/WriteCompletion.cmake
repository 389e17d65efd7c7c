# cmake -DEXECUTABLE=lume-unlock -DSHELL=bash|zsh -DOUTPUT=FILE -P WriteCompletion.cmake
# Writes the completion script the binary generates for SHELL (a build step: no shell
# redirection in add_custom_command).
get_filename_component(output_dir "${OUTPUT}" DIRECTORY)
file(MAKE_DIRECTORY "${output_dir}")
execute_process(COMMAND "${EXECUTABLE}" completions "${SHELL}"
  OUTPUT_FILE "${OUTPUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "'${EXECUTABLE} completions ${SHELL}' failed: ${rc}")
endif()
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
