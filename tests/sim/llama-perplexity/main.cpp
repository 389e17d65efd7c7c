// llama-perplexity stand-in for guest-sim: as far as lume-unlock sees it, it behaves like
// llama.cpp's tools/perplexity (docs/sources.md, "llama-perplexity"). It reads -m, -f, -c, -b,
// -ngl, -t and --chunks; tokenizes the text (a word, a number or one punctuation mark is a token,
// plus the BOS token); and scores chunks of n_ctx tokens the way the real tool does: the second
// half of each chunk, running perplexity printed on stdout as "[1]x.xxxx,", the final estimate on
// stderr as "Final estimate: PPL = %.4lf +/- %.5lf". Each token's negative log-likelihood comes
// from a hash of the model file and the token with its predecessor, so the figures depend on the
// model and the text and on nothing else. A text shorter than 2 × n_ctx tokens fails as the real
// tool fails: two error lines on stderr, no figures, exit status 0.
//
// The GPU run (-ngl other than 0) adds a rounding-sized difference per token, as a GPU's other
// summation order does. Test control (not llama.cpp behaviour): LLAMA_PERPLEXITY_SIM_GPU_DRIFT=D
// makes the GPU run's perplexity (1 + D) times the CPU's, as kernels that compute wrong answers
// would; the -ngl 0 run ignores it. LLAMA_PERPLEXITY_SIM_GPU_METAL_ERROR=1 makes the GPU run print
// ggml-metal's failed-command-buffer lines on stderr (ggml_metal_synchronize's format,
// docs/sources.md) before its figures, which it still prints.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Arguments {
  std::string model;
  std::string file;
  long context = 512; // the tool's own default (perplexity.cpp main: params.n_ctx = 512)
  long batch = 2048;  // common_params' default n_batch
  long gpu_layers = -1;
  long chunks = -1;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::exit(1);
}

long number(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') {
    fail("invalid argument for " + flag + ": " + text);
  }
  return value;
}

Arguments parse(int argc, char** argv) {
  Arguments out;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      fail("expected value for argument: " + flag);
    }
    const std::string value = argv[++i];
    if (flag == "-m" || flag == "--model") {
      out.model = value;
    } else if (flag == "-f" || flag == "--file") {
      out.file = value;
    } else if (flag == "-c" || flag == "--ctx-size") {
      out.context = number(value, flag);
    } else if (flag == "-b" || flag == "--batch-size") {
      out.batch = number(value, flag);
    } else if (flag == "-ngl" || flag == "--gpu-layers" || flag == "--n-gpu-layers") {
      out.gpu_layers = number(value, flag);
    } else if (flag == "--chunks") {
      out.chunks = number(value, flag);
    } else if (flag == "-t" || flag == "--threads") {
      (void)number(value, flag);
    } else {
      fail("invalid argument: " + flag);
    }
  }
  return out;
}

std::uint64_t fnv(const std::string& text, std::uint64_t hash = 1469598103934665603ULL) {
  for (const unsigned char c : text) {
    hash = (hash ^ c) * 1099511628211ULL;
  }
  return hash;
}

bool word_char(unsigned char c) {
  return std::isalnum(c) != 0 || c >= 0x80;
}

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> out = {"<s>"}; // common_tokenize(ctx, prompt, true) adds BOS
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (std::isspace(c) != 0) {
      ++i;
    } else if (word_char(c)) {
      std::size_t end = i;
      while (end < text.size() && word_char(static_cast<unsigned char>(text[end]))) {
        ++end;
      }
      out.push_back(text.substr(i, end - i));
      i = end;
    } else {
      out.push_back(text.substr(i++, 1));
    }
  }
  return out;
}

std::string read_all(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string out(limit, '\0');
  in.read(&out[0], static_cast<std::streamsize>(limit));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

/// Scores `n_chunk` chunks of `n_ctx` tokens as perplexity.cpp does: the second half of each,
/// running perplexity on stdout, the final estimate on stderr.
void score(const std::vector<std::string>& tokens,
           long n_ctx,
           long n_chunk,
           bool gpu,
           std::uint64_t model) {
  double gpu_shift = 0;
  if (const char* drift = std::getenv("LLAMA_PERPLEXITY_SIM_GPU_DRIFT"); drift != nullptr && gpu) {
    gpu_shift = std::log1p(std::strtod(drift, nullptr));
  }
  if (const char* failing = std::getenv("LLAMA_PERPLEXITY_SIM_GPU_METAL_ERROR");
      failing != nullptr && std::string(failing) == "1" && gpu) {
    std::fprintf(stderr,
                 "ggml_metal_synchronize: error: command buffer 0 failed with status 5\n"
                 "error: Internal Error (0000000e:Internal Error)\n");
  }
  double nll = 0;
  double nll2 = 0;
  long count = 0;
  const long first = n_ctx / 2;
  for (long chunk = 0; chunk < n_chunk; ++chunk) {
    if (chunk == 0) {
      std::fprintf(stderr, "perplexity: %.2f seconds per pass - ETA ", gpu ? 0.05 : 0.5);
      std::printf("%.2f minutes\n", (gpu ? 0.05 : 0.5) * static_cast<double>(n_chunk) / 60.0);
    }
    for (long j = first; j < n_ctx - 1; ++j) {
      const long at = chunk * n_ctx + j + 1;
      const std::uint64_t h = fnv(tokens[at], fnv(tokens[at - 1], model));
      double v = 0.5 + 4.0 * static_cast<double>(h % 10000) / 10000.0;
      if (gpu) {
        v += static_cast<double>((h >> 20) % 3) * 1e-4 + gpu_shift;
      }
      nll += v;
      nll2 += v * v;
      ++count;
    }
    std::printf("[%ld]%.4lf,", chunk + 1, std::exp(nll / static_cast<double>(count)));
    std::fflush(stdout);
  }
  std::printf("\n");
  const double mean = nll / static_cast<double>(count);
  const double ppl = std::exp(mean);
  const double variance = nll2 / static_cast<double>(count) - mean * mean;
  if (variance > 0) {
    const double spread = std::sqrt(variance / static_cast<double>(count - 1));
    std::fprintf(stderr, "Final estimate: PPL = %.4lf +/- %.5lf\n", ppl, spread * ppl);
  } else {
    std::fprintf(stderr, "Unexpected negative standard deviation of log(prob)\n");
  }
  std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  std::ifstream text_file(args.file, std::ios::binary);
  if (args.file.empty() || !text_file) {
    fail("failed to open file '" + args.file + "'");
  }
  std::string text((std::istreambuf_iterator<char>(text_file)), std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() == '\n') {
    text.pop_back(); // as -f does
  }
  if (args.context <= 0) {
    std::fprintf(stderr, "main: perplexity tool requires '--ctx-size' > 0\n");
    return 1;
  }
  if (args.model.empty() || ::access(args.model.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "main: unable to load model\n");
    return 1;
  }
  const long n_ctx = args.context;
  const long n_seq = std::max(1L, args.batch / n_ctx);
  const long n_batch = std::min(args.batch, n_seq * n_ctx);
  const bool gpu = args.gpu_layers != 0;
  const std::uint64_t model = fnv(read_all(args.model, 1 << 16));

  std::fprintf(stderr, "perplexity: tokenizing the input ..\n");
  const auto started = std::chrono::steady_clock::now();
  const std::vector<std::string> tokens = tokenize(text);
  std::fprintf(stderr,
               "perplexity: tokenization took %g ms\n",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                   .count());
  const long count_tokens = static_cast<long>(tokens.size());
  if (count_tokens < 2 * n_ctx) {
    std::fprintf(stderr,
                 "perplexity: you need at least %ld tokens to evaluate perplexity with a context "
                 "of %ld\n",
                 2 * n_ctx,
                 n_ctx);
    std::fprintf(stderr,
                 "perplexity: the data file you provided tokenizes to only %zu tokens\n",
                 tokens.size());
    std::printf("\n");
    return 0;
  }
  if (!(n_batch < n_ctx || n_batch % n_ctx == 0)) {
    std::fprintf(stderr, "GGML_ASSERT(n_batch < n_ctx || n_batch %% n_ctx == 0) failed\n");
    std::abort();
  }
  const long n_chunk_max = count_tokens / n_ctx;
  const long n_chunk = args.chunks < 0 ? n_chunk_max : std::min(args.chunks, n_chunk_max);
  std::fprintf(stderr,
               "perplexity: calculating perplexity over %ld chunks, n_ctx=%ld, batch_size=%ld, "
               "n_seq=%ld\n",
               n_chunk,
               n_ctx,
               n_batch,
               n_seq);
  score(tokens, n_ctx, n_chunk, gpu, model);
  return 0;
}
