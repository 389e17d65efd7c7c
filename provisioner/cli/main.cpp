#include "cli/app.hpp"

#include <unistd.h>

#include <iostream>

int main(int argc, char** argv) {
  return lume_unlock::cli::run_cli(
      argc, argv, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0, isatty(STDERR_FILENO) != 0);
}
