# The version comes from project(); the source revision from git when the tree is a checkout.
set(LUME_UNLOCK_VERSION "${PROJECT_VERSION}")
set(LUME_UNLOCK_SOURCE_REVISION "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${PROJECT_SOURCE_DIR}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --short=12 HEAD
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    OUTPUT_VARIABLE _rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _rev)
    set(LUME_UNLOCK_SOURCE_REVISION "${_rev}")
  endif()
endif()
