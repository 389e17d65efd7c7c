# Compiler settings shared by lume-unlock's own targets.

# Strict warnings for our code only (third-party headers come in as system includes).
function(lume_unlock_strict_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()

# Sanitizers are directory-scoped: the provisioner and its tests use them, the shim does not,
# because an ASan runtime cannot be injected with LD_PRELOAD/DYLD_INSERT_LIBRARIES into a
# process that was not built with it.
macro(lume_unlock_enable_sanitizers_here)
  if(LUME_UNLOCK_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
    # GCC 12 reports false "maybe-uninitialized" warnings inside libstdc++ (std::regex,
    # std::function) when instrumented; with -Werror they would break the sanitizer build.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      add_compile_options(-Wno-maybe-uninitialized)
    endif()
  endif()
endmacro()
