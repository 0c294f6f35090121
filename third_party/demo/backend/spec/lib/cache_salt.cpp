// The demo backend's kernel cache salt: like trunk's, plus the identity of the toolchain the demo
// backend's kernels depend on, so that a toolchain change also invalidates its cached kernels.
#include "flagtree/core.h"

namespace flagtree {

namespace {
constexpr const char* kDemoToolchain = "demo-toolchain-1";
}

std::string cache_salt(const std::string& backend, const std::string& tree_digest) {
  return "flagtree-" + backend + "-" + tree_digest + "-" + kDemoToolchain;
}

}  // namespace flagtree
