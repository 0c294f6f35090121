// triton._C.libflagtree: the guarded functions, and which of them this build's backend replaced
// (the C++ half of `python -m triton.flagtree_spec`).
#if __has_include("flagtree_spec.h")
#include "flagtree_spec.h"
#define FLAGTREE_HAS_SPEC_HEADER 1
#else
#define FLAGTREE_HAS_SPEC_HEADER 0
#endif

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "flagtree/core.h"

namespace py = pybind11;

namespace {

// Every trunk guard, with whether the compiled backend header defined it.
std::vector<std::pair<std::string, bool>> guards() {
  return {
#ifdef FLAGTREE_SPEC_cache_salt
      {"FLAGTREE_SPEC_cache_salt", true},
#else
      {"FLAGTREE_SPEC_cache_salt", false},
#endif
  };
}

}  // namespace

PYBIND11_MODULE(libflagtree, m) {
  m.doc() = "FlagTree native core: C++ specialization guards and their trunk defaults";
  m.attr("backend") = FLAGTREE_BACKEND_NAME;
  m.attr("has_spec_header") = static_cast<bool>(FLAGTREE_HAS_SPEC_HEADER);
  m.def("cache_salt", &flagtree::cache_salt, py::arg("backend"), py::arg("tree_digest"),
        "The kernel cache key salt (guard FLAGTREE_SPEC_cache_salt).");
  m.def("guards", &guards, "[(guard macro, replaced by the backend)] for every trunk guard.");
}
