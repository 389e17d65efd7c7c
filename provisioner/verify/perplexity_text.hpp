#pragma once

#include <string_view>

namespace lume_unlock::verify {

/// The fixed text every bench's llama-perplexity runs read (-f): our own prose, 2,498 words,
/// provisioner/verify/perplexity-text.txt, compiled into the program. It tokenizes to well over
/// 2 × k_perplexity_context tokens, which llama-perplexity needs for even one chunk.
std::string_view perplexity_text();

/// Where the bench puts it in the guest, under the guest user's home.
inline constexpr const char* k_perplexity_text_guest_path =
    "Library/Application Support/LumeUnlock/bench/perplexity-text.txt";

} // namespace lume_unlock::verify
