# Homebrew formula for lume-unlock. The project has no public address yet, so the formula builds
# HEAD of a local checkout: $HOMEBREW_LUME_UNLOCK_SOURCE (Homebrew passes HOMEBREW_* variables
# through), else the checkout this file sits in. From a checkout (README "Build"):
#   brew tap-new "$USER/lume-unlock"
#   cp packaging/homebrew/lume-unlock.rb "$(brew --repository "$USER/lume-unlock")/Formula/"
#   HOMEBREW_LUME_UNLOCK_SOURCE="$PWD" brew install --HEAD "$USER/lume-unlock/lume-unlock"
# The dependencies are exactly scripts/bootstrap's brew_build_packages;
# tests/packaging/check_formula.py fails when the two lists differ.
class LumeUnlock < Formula
  desc "Provision macOS VMs under Lume with a process-scoped Metal capability shim"
  # No homepage yet: the project has no public address. The license is the LICENSE file's.
  license "MIT"
  head "file://#{ENV.fetch("HOMEBREW_LUME_UNLOCK_SOURCE", File.expand_path("../..", __dir__))}",
       using: :git

  depends_on "cli11" => :build
  depends_on "cmake" => :build
  depends_on "nlohmann-json" => :build
  depends_on "pkg-config" => :build
  depends_on "curl"
  depends_on "libarchive"
  depends_on "libssh"
  depends_on :macos
  depends_on "openssl@3"
  depends_on "yaml-cpp"

  def install
    # The same configure/build/install as the README, without the test suites and simulators.
    system "cmake", "-S", ".", "-B", "build", "-DLUME_UNLOCK_BUILD_TESTS=OFF", *std_cmake_args
    system "cmake", "--build", "build"
    system "cmake", "--install", "build"
  end

  test do
    version_text = shell_output("#{bin}/lume-unlock --version")
    assert_match(/^lume-unlock \d+\.\d+\.\d+ \(source \h+\)$/, version_text)
    assert_match "(installed): bundle.json sha256:", version_text

    # A llama.cpp Metal init log, composed: an Apple7 paravirtual device with the fast paths on.
    (testpath/"llama.log").write <<~LOG
      ggml_metal_device_init: GPU name:   MTL0 (Apple Paravirtual device)
      ggml_metal_device_init: GPU family: MTLGPUFamilyApple7  (1007)
      ggml_metal_device_init: GPU family: MTLGPUFamilyCommon3 (3003)
      ggml_metal_device_init: simdgroup reduction   = true
      ggml_metal_device_init: simdgroup matrix mul. = true
      ggml_metal_device_init: has bfloat            = true
    LOG
    assert_match "verdict: fast", shell_output("#{bin}/lume-unlock inspect-log #{testpath}/llama.log")
  end
end
