/* llama-server stand-in for guest-sim's LaunchAgents: as far as launchd, lsof and lume-unlock see
 * it, it behaves like llama.cpp's llama-server at its default verbosity. It refuses a model it
 * cannot read (exit 1), opens the Metal device (libMetalEmu, through the probe's query path, so
 * an injected shim hooks the device and writes its own line), prints nothing of ggml's capability
 * block (llama-server hides ggml's INFO lines since llama.cpp PR #23021: docs/sources.md), and then
 * keeps running, as a server does, until SIGTERM or SIGINT ends it with exit 0. It serves no HTTP:
 * nothing here asks it. As ggml-org/llama.cpp tools/server/server.cpp, llama_server() (00dd0816):
 * arguments that do not parse return 1, a model that does not load returns 1 ("exiting due to
 * model loading error"), and the signal handler ends the main loop, which returns 0. Its other
 * wording is its own.
 * Usage: llama-server -m|--model PATH [--port N] [--host ADDR] */
#include "probe/device_query.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void stop(int signal_number) {
  (void)signal_number;
  _exit(0);
}

static int value_flag(const char* arg) {
  return strcmp(arg, "-m") == 0 || strcmp(arg, "--model") == 0 || strcmp(arg, "--port") == 0 ||
         strcmp(arg, "--host") == 0;
}

int main(int argc, char** argv) {
  const char* model = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!value_flag(argv[i]) || i + 1 >= argc) {
      fprintf(stderr, "error: invalid argument: %s\n", argv[i]);
      return 1;
    }
    if (strcmp(argv[i], "-m") == 0 || strcmp(argv[i], "--model") == 0)
      model = argv[i + 1];
    ++i;
  }
  FILE* file = model != NULL ? fopen(model, "rb") : NULL;
  if (file == NULL) {
    fprintf(stderr, "error: failed to load model '%s'\n", model != NULL ? model : "");
    fprintf(stderr, "exiting due to model loading error\n");
    return 1;
  }
  fclose(file);
  signal(SIGTERM, stop);
  signal(SIGINT, stop);
  lume_unlock_probe_device facts;
  if (lume_unlock_probe_open_device(0, &facts) == NULL) {
    fprintf(stderr, "error: no Metal device\n");
    return 1;
  }
  fflush(stderr);
  for (;;)
    pause(); /* until stop() ends it */
}
