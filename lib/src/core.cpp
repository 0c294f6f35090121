// Trunk defaults of the guarded functions (see include/flagtree/core.h).
#if __has_include("flagtree_spec.h")
#include "flagtree_spec.h"
#endif

#include "flagtree/core.h"

namespace flagtree {

#ifndef FLAGTREE_SPEC_cache_salt
std::string cache_salt(const std::string& backend, const std::string& tree_digest) {
  return "flagtree-" + (backend.empty() ? std::string("trunk") : backend) + "-" + tree_digest;
}
#endif

}  // namespace flagtree
