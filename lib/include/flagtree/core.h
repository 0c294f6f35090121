// The native FlagTree core: functions trunk provides and a backend may replace.
// A backend replaces `name` by defining FLAGTREE_SPEC_<name> in its spec/include/flagtree_spec.h
// and defining flagtree::<name> in its spec/lib sources; trunk's default is then not compiled.
#pragma once

#include <string>

namespace flagtree {

// What a FlagTree build adds to Triton's kernel cache key (triton_key), so that kernels compiled
// by another build are never reused: trunk uses the backend name and the spec tree digest.
std::string cache_salt(const std::string& backend, const std::string& tree_digest);

}  // namespace flagtree
