// The demo backend's C++ specialization: it replaces flagtree::cache_salt (lib/include/flagtree/core.h).
#pragma once

#define FLAGTREE_SPEC_cache_salt
