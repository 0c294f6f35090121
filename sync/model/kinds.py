"""The catalogue of finding kinds: every kind the tool can report, declared once.

Severity, meaning, the default action and the documentation anchor of a finding come from here,
never from the code that raises it. `flagtree-sync kinds`, `check --list-rules`, the tables in docs/
and the SARIF/annotation outputs all read this table; a test fails when those tables drift from it.
"""
from __future__ import annotations

from dataclasses import dataclass

# error: it breaks (build, import or a conflict); warning: it likely breaks or behaves otherwise; port: upstream
# changed what a backend copies or replaces, and the copy still builds and loads: work to take over, not a break;
# info: nothing to do unless the backend wants it. Error, warning and port count toward the exit status.
SEVERITIES = ("error", "warning", "port", "info")
FAMILIES = ("conflict", "gate", "overlay", "spec", "guard", "symbol", "policy", "analysis")
CONFIDENCES = ("certain", "high", "medium", "low")


@dataclass(frozen=True)
class Kind:
    id: str  # the stable slug findings carry, e.g. "overlay-conflicting"
    family: str
    severity: str  # the default; a finding of this kind always has it
    meaning: str  # one line: what was found
    action: str  # one line: what a person should do
    code: str | None = None  # rule id of a policy kind (FT001...), stable for CI configurations
    confidence: str = "certain"  # how sure a finding of this kind is that a person must act

    @property
    def anchor(self) -> str:
        """The heading id of this kind in docs/KINDS.md."""
        return "kind-" + self.id.replace("/", "-")

    @property
    def doc_url(self) -> str:
        return f"docs/KINDS.md#{self.anchor}"


def _k(id: str, family: str, severity: str, meaning: str, action: str, code: str | None = None,
       confidence: str = "certain") -> Kind:
    return Kind(id, family, severity, meaning, action, code, confidence)


CATALOGUE: tuple[Kind, ...] = (
    # Replay conflicts: one per conflicted file of a replayed commit.
    _k("content", "conflict", "error", "both sides changed the same lines of a file",
       "resolve the hunks on the new branch (upgraded side vs FlagTree side)"),
    _k("add/add", "conflict", "error", "upstream and FlagTree both added a file at the same path",
       "merge the two files by hand"),
    _k("deleted-upstream", "conflict", "error", "FlagTree changed a file that upstream deleted; the FlagTree "
       "version was kept so nothing is lost", "port the FlagTree change to where upstream moved the code, "
       "then delete the file"),
    _k("deleted-by-flagtree", "conflict", "error", "FlagTree deleted a file that upstream changed; the upgraded "
       "file was kept", "decide whether FlagTree still wants it deleted: git rm it, or keep it and commit a "
       "'FlagTree-Sync-Resolved: PATH' line"),
    _k("renamed-upstream", "conflict", "error", "FlagTree changed a file that upstream renamed, and the change "
       "conflicts with upstream's in the renamed file (the path is upstream's new one, base_path FlagTree's)",
       "resolve the hunks in the file under its new name"),
    _k("rename/delete", "conflict", "error", "one side renamed a file the other deleted; the renamed file was kept "
       "(path: the new name, base_path: the old one)", "decide whether the file goes: git rm it, or keep it and "
       "port what the deleting side meant"),
    _k("rename/rename", "conflict", "error", "upstream and FlagTree renamed the same file to different paths; "
       "both were kept (one conflict per new path, base_path the old one)", "keep one name, delete the other, "
       "and fix what includes or imports it"),
    _k("file-location", "conflict", "error", "a file was added inside a directory the other side renamed; git "
       "placed it in the renamed directory", "check that the file belongs in the new directory, or move it back"),
    _k("type-clash", "conflict", "error", "the sides hold different kinds of entry at the path (file and "
       "directory, file and symlink, or different modes); git kept both, one under path~HEAD or path~<commit>",
       "keep one of them under the path and delete the other"),
    _k("tree-conflict", "conflict", "error", "git reported another conflict on the path (e.g. a rename involved "
       "in a collision)", "resolve it as git cherry-pick would leave it: compare both sides by hand"),
    # Test gate.
    _k("gate-failed", "gate", "error", "the test gate command fails on the replayed branch",
       "fix the first failing commit the gate names, then rerun the gate"),
    # Overlays: whole files that shadow a trunk file.
    _k("overlay-in-sync", "overlay", "info", "nothing to merge: the trunk counterpart is unchanged since the "
       "overlay's base, or the overlay already holds upstream's change (applied by drift --apply or merged by hand), "
       "or it is a C++/TableGen copy identical to trunk (the backend's build compiles it, so it stays)",
       "none; after a hand merge, record the new base with flagtree-sync provenance"),
    _k("overlay-marked", "overlay", "error", "the overlay (or copy) holds committed conflict markers: it cannot "
       "build or load as it is, and provenance records no base for it; drift judges it no further",
       "resolve the conflict blocks, commit, then run drift (and provenance) again"),
    _k("overlay-auto-mergeable", "overlay", "port", "upstream changed the trunk counterpart and the 3-way "
       "merge (base trunk@OLD, ours overlay, theirs trunk@NEW) is clean",
       "apply the merged file (drift --apply) and review"),
    _k("overlay-conflicting", "overlay", "port", "upstream changed the trunk counterpart and the 3-way merge "
       "conflicts: the overlay still loads as it is (overlay-missing-names and the symbol kinds say when it would "
       "not build or import), without upstream's change", "merge by hand: the hunks show both sides"),
    _k("overlay-orphan", "overlay", "error", "the trunk counterpart was deleted or renamed upstream",
       "move the overlay to where the code went, or delete it"),
    _k("overlay-redundant", "overlay", "info", "the overlay is identical to the trunk that loads in its place "
       "(the upgraded branch's, else trunk@NEW) or all its statements are in it, or it is its base unchanged and "
       "FlagTree's trunk has nothing of its own there, or it is the FlagTree branch's own trunk file (Python overlays only: a C++ or TableGen copy is compiled by "
       "the backend's build, and one left at its base is merged like any other)", "delete the overlay: trunk now does the same"),
    _k("overlay-missing-names", "overlay", "error", "a Python overlay (or a setup helper's copy) loads in place of a "
       "trunk module from which trunk at the new tag imports names it did not import before, and the overlay "
       "binds them nowhere: importing trunk fails on that backend; or a TableGen overlay builds in place of a "
       "trunk .td whose new version generates classes or accessors trunk's C++ now uses, and the overlay generates "
       "them nowhere: trunk does not compile on that backend", "merge upstream's change into the overlay, "
       "or define the names"),
    _k("overlay-class-clash", "overlay", "error", "a TableGen overlay generates a class upstream moved out of its "
       "trunk counterpart into a dialect of other namespaces, and trunk's C++ at the new tag opens both namespaces "
       "and names the class unqualified: the name is ambiguous on that backend", "drop the class from the "
       "overlay, as upstream did, or qualify the uses"),
    _k("package-dir-missing", "overlay", "error", "setup installs every triton package from the backend's own "
       "python/ tree (a shared helper's package_dir), and upstream's build at the new tag installs a package (found "
       "under python/triton/, or added to setup.py's list) that tree has no directory for: setuptools stops",
       "add the package to the backend's tree, or leave it to trunk in skip_package_dir (or out of the list for "
       "that backend)"),
    _k("import-not-installed", "overlay", "error", "a module the backend's build installs imports a package the "
       "old build installed and upstream's package list no longer names: the wheel lacks it, and the import fails",
       "list the package again for that backend in setup.py, or drop the import from the backend's tree"),
    _k("overlay-include-removed", "overlay", "error", "a TableGen overlay includes a trunk .td file upstream deleted "
       "or moved, and the backend provides no file of that name: TableGen stops on that backend",
       "merge upstream's change into the overlay (include what replaced the file)"),
    _k("overlay-unbuilt", "overlay", "info", "upstream changed the trunk counterpart of a C++ overlay or copy under "
       "a directory the backend's build leaves out (its add_subdirectory is commented out): nothing compiles it",
       "none while the directory stays out of the build; delete the file if it is dead"),
    _k("copy-stale", "overlay", "port", "a backend that compiles against trunk's headers carries a copy (under "
       "another name, or in its own package) of a trunk file upstream changed, deleted or moved: the copy keeps the "
       "old file's behaviour (symbol-removed, call-no-overload and the other error kinds name where it no longer "
       "builds against the new headers)", "take upstream's change into the copy (the merge is shown), "
       "or say why the backend keeps the old behaviour"),
    _k("copy-conflicting", "overlay", "info", "upstream changed the file a backend's copy under another name (or in "
       "its own package) repeats, and the 3-way merge conflicts; the backend builds its own tree (it carries "
       "trunk's headers), so nothing breaks", "port upstream's change by hand if the backend tracks this file"),
    _k("copy-mergeable", "overlay", "info", "upstream changed the file a backend's copy under another name (or in "
       "its own package) repeats, and the 3-way merge is clean; drift --apply leaves copies alone",
       "take upstream's change if the backend tracks this file"),
    _k("copy-orphan", "overlay", "info", "the file a backend's copy under another name (or in its own package) "
       "repeats was deleted or renamed upstream; the copy still builds as it is",
       "check whether the backend still wants this copy"),
    _k("hijack-lost", "overlay", "error", "the overlay's package no longer exists or no longer calls spec_path "
       "on the upgraded tree", "move the overlay to a hijacked package or into a spec function"),
    _k("overlay-symlink", "overlay", "info", "the overlay is a symbolic link and was not analysed",
       "replace the link by the file"),
    _k("overlay-binary", "overlay", "warning", "the overlay is binary; only identity with trunk was checked",
       "compare it with the trunk file at the new tag by hand"),
    _k("overlay-unparsable", "overlay", "error", "the overlay is not valid Python", "fix the syntax error; it "
       "would fail at import"),
    _k("overlay-unreadable", "overlay", "error", "the overlay is committed as a Git LFS pointer: its content is not "
       "in the repository, so it was not analysed (and a build without git-lfs compiles or imports the pointer)",
       "commit the file itself (git lfs migrate export --include=PATH), then rerun"),
    # Spec functions: what spec/triton/__init__.py exports for spec and spec_func.
    _k("spec-module-unparsable", "spec", "error", "a spec-function module does not parse", "fix the syntax error"),
    _k("spec-dead", "spec", "error", "no trunk call site of the spec function is left", "restore the hook "
       "where upstream moved the code, or drop the spec function"),
    _k("spec-call-site-moved", "spec", "warning", "the hook call site moved to another file",
       "check the hook still runs where the backend expects"),
    _k("spec-call-args-changed", "spec", "warning", "the hook call site passes other arguments now",
       "update the backend function to the new arguments"),
    _k("spec-enclosing-removed", "spec", "error", "the trunk function around the hook call is gone",
       "re-hook the call in the code that replaced it"),
    _k("spec-enclosing-changed", "spec", "port", "the trunk function around the hook call changed upstream",
       "review the backend function against it"),
    _k("spec-replaced-function-changed", "spec", "port", "the trunk function a spec_func replaces changed "
       "upstream", "port the upstream change into the backend function"),
    _k("spec-signature-mismatch", "spec", "error", "the backend function's parameters no longer fit the call "
       "site or the trunk function it replaces", "change the backend signature to match"),
    _k("spec-unused", "spec", "info", "the backend exports a function no trunk hook calls",
       "none needed; delete the function once no trunk hook will call it again"),
    _k("spec-unimplemented", "spec", "info", "a trunk hook names a function no backend implements",
       "none needed while trunk's default serves every backend; implement it in a backend to specialize"),
    # C++ guards: trunk #ifdef/#ifndef FLAGTREE_SPEC_<name> and the backend's replacements.
    _k("guard-default-changed", "guard", "port", "the trunk default a FLAGTREE_SPEC_* guard replaces changed "
       "upstream", "port the upstream change into the backend's replacement"),
    _k("guard-default-removed", "guard", "error", "the guarded trunk default or its file is gone upstream",
       "re-target the backend replacement at the code that replaced it"),
    _k("guard-lost", "guard", "error", "the #ifdef/#ifndef guard is gone from the upgraded tree",
       "re-add the guard around the trunk default"),
    _k("guard-replacement-missing", "guard", "error", "the backend defines a FLAGTREE_SPEC_* macro that turns a "
       "trunk function off, and its spec library defines no replacement (an op's fold, verify or canonicalize "
       "that the backend's own copy of the op's TableGen record never declares needs none)", "define the replacement in spec/lib, or "
       "drop the macro"),
    _k("guard-signature-mismatch", "guard", "error", "the backend's replacement of a guarded trunk function takes "
       "other parameters than trunk declares on the upgraded tree (the new tag with FlagTree's own trunk changes)", "change the replacement's parameters to trunk's",
       confidence="high"),
    _k("guard-macro-unreachable", "guard", "warning", "a FLAGTREE_SPEC_* macro defined in a backend header that "
       "spec/include/flagtree_spec.h does not include: the build never sees it and trunk's default stays on",
       "include the header from flagtree_spec.h, or drop the macro"),
    _k("guard-unused", "guard", "info", "the backend defines a FLAGTREE_SPEC_* macro no trunk code of the FlagTree "
       "branch tests: dead before this move (a guard the move takes away is guard-default-removed)",
       "drop the macro or restore the trunk guard"),
    _k("feature-ungated", "guard", "warning", "FlagTree-added trunk C++ names a component (include root, "
       "namespace, op-name prefix) that the fork elsewhere builds only under a macro its CMake defines, but sits "
       "outside that macro here: a build without the macro breaks, and the fork's gating is inconsistent",
       "put the lines under the same #ifdef as the component's other code, or drop the gate everywhere",
       confidence="medium"),
    _k("module-not-imported", "symbol", "info", "no build imports this trunk Python module (each backend's setup "
       "installs its own copy of the package, lists the package only for other backends, or lacks a libtriton "
       "submodule the package requires): the findings its lines would carry are listed here instead",
       "nothing for the build; delete the module or list its package where a build should ship it"),
    # Symbols: FlagTree-added code whose trunk dependencies changed upstream.
    _k("symbol-drift", "symbol", "warning", "FlagTree-added lines use trunk symbols upstream removed or "
       "re-declared between the tags", "check these uses against the new tag: the clean merge proves nothing "
       "about them", confidence="high"),
    _k("symbol-removed", "symbol", "error", "FlagTree-added lines use a trunk declaration (C++ function, member, "
       "type, enumerator, ODS op or accessor; Python name; header) that upstream removed between the tags and "
       "declares nowhere else: the use resolves at the old tag through its qualifier or receiver type and not at "
       "the new one, so the code will not build or import as is (one finding per upstream change and backend, "
       "listing each declaration it removed and every site)", "port the uses to what upstream put in its "
       "place (the finding names it when the same change declared one of the same shape)", confidence="high"),
    _k("conflict-side-unresolved", "symbol", "warning", "FlagTree's side of a committed conflict hunk uses names "
       "that resolved on the FlagTree branch and that the upgraded tree does not have: an included header or .td "
       "file, a Python module or a name it bound, a module-level Python name, a C++ name no file declares, a CMake "
       "library no file defines (the side's old-tag lines come with FlagTree's when it is taken; one finding per "
       "file, every name and its line)",
       "resolve the hunk without those names: keep the upgraded side's lines around FlagTree's, or port the use to "
       "what the new tag has", confidence="medium"),
    _k("member-removed", "symbol", "error", "FlagTree-added lines call a member (`x.m()`, `x->m()`) whose name "
       "upstream's trunk declared at the old tag (C++ method or function, ODS accessor, interface method) and its "
       "new tree neither declares nor spells, while FlagTree declares no member of that name where the call sees "
       "it: whatever the receiver's type, the call will not build (one finding per name and backend, every site, "
       "the upstream commit, and the new name where that commit renamed every declaration to one)",
       "rename the calls to the name the finding gives (flagtree-sync port does it), or port them to what "
       "upstream put in its place", confidence="high"),
    _k("attribute-removed", "symbol", "error", "FlagTree's added Python reads an attribute `x.m` (x no module the "
       "file imports) where m was a member of a trunk class at the old tag, the new tag spells m nowhere in code, "
       "and nothing on the upgraded branch binds it on a class or object: reading it raises AttributeError (one "
       "finding per name and backend, every site, the upstream commit)",
       "port upstream's replacement of the attribute, or define it in the backend"),
    _k("symbol-moved", "symbol", "error", "FlagTree's lines use a trunk declaration that resolved at the old tag "
       "and that upstream moved: to another namespace or class, so the qualified name FlagTree spells "
       "(`mlir::registerTritonPasses()`, generated pass registrations included) no longer resolves; or to another "
       "header, which the file reaches neither directly nor through the headers it includes. The code will not "
       "build as is", "spell the name as upstream declares it now, or include the header the finding names",
       confidence="high"),
    _k("definition-clash", "symbol", "error", "a file FlagTree changed defines a macro, a namespace alias or a type "
       "alias on its own lines, and upstream added a definition of the same name and scope with another body or "
       "target to a file that meets FlagTree's in one translation unit (one includes the other on the upgraded branch): "
       "the alias no longer compiles, the macro redefinition is an error under trunk's -Werror", "rename FlagTree's "
       "definition or take upstream's, and check its users", confidence="high"),
    _k("definition-mismatch", "symbol", "error", "FlagTree's own lines define a function or method that upstream's "
       "code declares (a plugin or module init function, a registered pass, a hook: the declaration lives in a trunk "
       "file upstream changed), and upstream changed that declaration's parameters between the tags; the definition "
       "still has the old ones, so upstream's calls no longer reach it (link error) or it matches no declaration "
       "(compile error)", "change the definition to the parameters upstream declares now, and port its body",
       confidence="high"),
    _k("declaration-mismatch", "symbol", "error", "FlagTree's own lines declare (without a body) a function that "
       "upstream's sources defined with external linkage at the old tag, and upstream now defines it only with other "
       "parameters or with internal linkage (static, an anonymous namespace): no definition matches FlagTree's "
       "declaration, so its calls do not link", "declare and call the function as upstream now defines it, or keep "
       "a definition of FlagTree's own", confidence="high"),
    _k("call-no-overload", "symbol", "error", "FlagTree calls a trunk class's method (through a receiver declared "
       "with that class), a trunk namespace's free function (named through the namespace, or from inside it when no "
       "other namespace declares the name) or a builder TableGen generates (X::get, create<Op>, Op::create) with a number of "
       "arguments that fit it at the old tag and none of its overloads at the new one (a parameter added without "
       "a default, or removed): the call will not build as is; or, in Python, calls a trunk function (through "
       "the file's imports) or a pybind11 method of a trunk class (through a variable made by its constructor, or "
       "by a name no other registration carries) whose parameters no longer take the call, or puts a key into a "
       "mapping it passes to a trunk dataclass (`C(**args)`) whose field of that name upstream removed: each call "
       "raises TypeError",
       "pass what the new signature asks for at every site the finding lists", confidence="high"),
    _k("co-change", "symbol", "warning", "FlagTree-added lines sit inside a function whose upstream body changed "
       "between the tags, in a file that merged without a textual conflict", "read the upstream diff of the "
       "function and check FlagTree's lines still fit it", confidence="medium"),
    _k("binding-caller-review", "symbol", "info", "FlagTree's Python calls a pybind method of FlagTree's own whose "
       "C++ body calls a declaration upstream changed in meaning (renamed, added or dropped parameters): the call "
       "fits the binding, and the break is in the body, reported at the C++ site", "when fixing the binding's "
       "body, check whether the values this call passes still mean what the new parameters ask", confidence="low"),
    _k("co-change-review", "symbol", "info", "as co-change, but FlagTree's lines use no name that upstream's "
       "change brought into or took out of the function", "glance at the upstream diff of the function; "
       "usually nothing to do", confidence="low"),
    _k("call-signature", "symbol", "warning", "FlagTree-added code calls a function, method or builder whose "
       "parameter list upstream changed so that the call may no longer mean what it did: the parameters at the "
       "positions it passes were renamed or retyped, or a pybind method's C++ body calls such a function "
       "(call-no-overload where no signature takes the call; one finding per upstream change and backend, "
       "listing each declaration it changed, every call site and the upstream commit and PR)", "rewrite "
       "the calls for the new parameter list the finding's diff shows, at every site the finding lists",
       confidence="high"),
    _k("override-signature", "symbol", "warning", "a FlagTree class derives from a trunk class and overrides a "
       "method whose parameters upstream changed, still with the old parameters, which trunk's new calls may still "
       "fit (a parameter renamed in place, one given a default): a TypeError where a call does not; the module "
       "still imports (override-missing-argument where no call can fit)", "give the override the new "
       "parameter list the finding's diff shows, in every class the finding lists", confidence="high"),
    _k("override-missing-argument", "symbol", "error", "a FlagTree class derives from a trunk class and overrides "
       "a method to which upstream added a required parameter, still with the old parameters, and the override "
       "can take that argument neither by position nor by name: trunk passes it, so every call raises TypeError",
       "give the override the new parameter list the finding's diff shows, in every class the finding lists",
       confidence="high"),
    _k("abstract-method-missing", "symbol", "error", "a FlagTree class derives from a trunk class whose trunk "
       "ancestors declare, at the new tag, an abstract method they did not before, and the FlagTree class defines "
       "none: creating it raises TypeError", "define the method in the FlagTree class (the base's docstring says "
       "what it returns)", confidence="high"),
    _k("result-shape-changed", "symbol", "error", "trunk unpacks the result of a method a backend provides into "
       "another number of names at the new tag than at the old one, and FlagTree's definition of that method "
       "returns the old number: the unpacking raises ValueError", "return the values trunk unpacks now, as "
       "upstream's own backends do", confidence="high"),
    _k("field-renamed", "symbol", "error", "upstream renamed a field of its own classes (same place, annotation "
       "and default) and trunk reads only the new name now, while a FlagTree class standing for one of them "
       "declares the old name: an AttributeError where trunk reads it", "rename the field as upstream's own "
       "classes did", confidence="high"),
    _k("decorated-keyword-missing", "symbol", "error", "a FlagTree function under a trunk decorator (@builtin) "
       "lacks a keyword that, at the new tag, nearly every upstream function under it takes and nearly none took "
       "before: what calls them passes it, so calling the FlagTree function raises TypeError (one finding per "
       "decorator change and backend, listing every site)", "give the function the new keyword (and pass it on "
       "where it passed the one it replaces), at every site the finding lists", confidence="high"),
    # info: a changed verifier is no evidence that what FlagTree builds fails it (judged on the 3.7 move: 1 of 14
    # such warnings was a break, 12 a look); a warning needs a break the tool can stand behind
    _k("op-verifier-changed", "symbol", "info", "FlagTree-added code creates an MLIR op whose verifier "
       "upstream changed between the tags: the call compiles, the op may now reject what FlagTree builds (one "
       "finding per upstream change and backend, listing each verifier it changed, every site and the upstream "
       "commit and PR); a look, not a break the tool has shown", "read the verifier's upstream diff and check the "
       "operands and types FlagTree passes at every site the finding lists", confidence="low"),
    _k("entry-script-moved", "symbol", "error", "upstream moved an entry script (setup.py, or a file run as "
       "__main__) to another directory, and FlagTree code it runs still resolves from the old one: a top-level "
       "import of a module beside the old script, or a path spelled `../` from the directory the build ran in",
       "import or spell the path from the script's new directory (as upstream's own script does now)",
       confidence="high"),
    _k("toolchain-name-gone", "symbol", "error", "FlagTree's compiled C++ spells a name that upstream stopped "
       "using in the commit that moved its toolchain pin (an LLVM bump) and spells nowhere at the new tag: the new "
       "toolchain no longer declares it as such (the finding names upstream's replacement where one line became "
       "another); upstream's own migration is the evidence, the toolchain's source is not read", "write it as upstream's own "
       "code does after the bump commit", confidence="medium"),
    _k("binding-missing-names", "overlay", "error", "a backend builds its own copy of the binding library "
       "(triton._C.libtriton), and trunk's Python at the new tag imports a name from it that the copy registers "
       "nowhere: importing trunk fails on that backend", "register the name in the backend's binding sources, "
       "taking upstream's C++ for it"),
    _k("conflict-take-upstream", "symbol", "info", "a file of the upgraded branch holds committed conflicts, but the "
       "FlagTree branch holds it exactly as the old tag has it (commits of the range changed it and changed it "
       "back): nothing of FlagTree's is left in it to keep", "take upstream's file at the new tag (the finding "
       "gives the git command)"),
    _k("generated-output-clash", "symbol", "error", "a CMake file of the upgraded branch adds two custom rules for "
       "one output of its directory (mlir_tablegen, add_custom_command OUTPUT), one from FlagTree's version and one "
       "from upstream's new one, and no `if` keeps them apart: CMake stops at configure in every build that runs "
       "both", "keep one rule: take upstream's, or put FlagTree's in the else branch of a condition on it"),
    _k("toolchain-sibling-renamed", "symbol", "warning", "FlagTree's compiled C++ uses a member of a toolchain scope "
       "(an enum, a class) whose other member the toolchain bump renamed, and upstream spells this member at "
       "neither tag: nothing in the tree says the new toolchain kept it (the finding gives the name the rename's "
       "pattern suggests)", "check the member against the new toolchain's headers; rename it as its siblings "
       "were", confidence="low"),
    _k("pin-stale", "symbol", "error", "a FlagTree line of a code or build file names the toolchain commit upstream "
       "pinned at the old tag (a one-hash file such as cmake/llvm-hash.txt), which the new tag moved: the build "
       "fetches or checks a toolchain the new trunk is not written for", "move the pin (and the toolchain it "
       "downloads or checks) to the new hash", confidence="high"),
    _k("build-file", "symbol", "error", "a FlagTree-added CMake entry names a source, object, directory or target "
       "that upstream removed, renamed or moved between the tags: CMake or the link stops (will not build as "
       "is)", "point the entry at where upstream moved it, or drop it", confidence="high"),
    _k("build-target-unconfigured", "symbol", "error", "a CMake file the build of one backend compiles links a "
       "target that only a directory that build does not add defines, and the link is new or the definition moved "
       "between the tags: CMake stops at configure (will not build as is)", "add the directory to that build, or "
       "leave the link out of it (a condition on the backend)", confidence="high"),
    _k("build-generated-dependency", "symbol", "info", "upstream added includes that make a CMake library "
       "FlagTree builds differently need TableGen output its DEPENDS does not name: a build-order race that "
       "upstream's own graph has too, so no evidence of a break (judged one in five on real moves)",
       "if a parallel build stops on a missing generated header, add the TableGen targets the finding lists to "
       "the library's DEPENDS", confidence="low"),
    _k("build-restructured", "symbol", "info", "FlagTree adds files to a directory whose CMakeLists.txt upstream "
       "restructured between the tags", "check the FlagTree files are still built by the new CMake",
       confidence="low"),
    _k("key-string", "symbol", "warning", "FlagTree code reads a dictionary key, attribute or option name from "
       "the container upstream writes it to, and upstream stopped writing it there or writes another kind of value", "check the value FlagTree reads still "
       "has the shape it expects (the diff shows the upstream producer)", confidence="medium"),
    _k("key-string-review", "symbol", "info", "FlagTree code reads a dictionary key, attribute or option name "
       "whose upstream write changed in a way that is probably harmless: upstream still writes it, to a "
       "dictionary or object of the same name, a value of the same kind (another number, another string); or the "
       "write or the read is on a dictionary with no name (a literal passed as an argument), so the tool cannot "
       "tell whether upstream writes the one FlagTree reads", "read the upstream diff in the finding: if FlagTree "
       "still gets a value it handles, nothing to change (record the review with flagtree-sync suppress); if not, "
       "fix the reading code as for key-string", confidence="low"),
    # Notes about the analysis itself.
    _k("symbol-drift-skipped", "analysis", "info", "symbol drift was not run: FlagTree's added lines cannot "
       "be told from upstream's", "pass the branch's own base as --from"),
    _k("analysis-skipped", "analysis", "warning", "a file the parsers cannot handle (nested too deeply, refused "
       "by CPython) was left out of one analysis, which the message names", "check that file by hand for this "
       "analysis; flatten the nesting if the file is yours"),
    _k("analysis-conflicted", "analysis", "info", "a file holding committed conflict markers was read with "
       "both sides of each conflict kept (the upgraded side first) by one analysis, which the message names: "
       "its findings on that file are provisional", "resolve the conflict, commit, and run status again"),
    _k("target-unavailable", "analysis", "info", "the delta could not be replayed in memory; hooks and guards "
       "were judged from the upstream tags alone", "pass --target"),
    _k("backend-without-spec", "analysis", "info", "a backend directory has no spec/ tree: no overlay, spec "
       "function or C++ guard of it to drift", "none for overlays; drift and upgrade still check the "
       "backend's own code against the new tag (call signatures, key strings, op verifiers)"),
    # The seed's directory policy (check). Rule ids are stable.
    _k("spec-path-forbidden", "policy", "error", "spec_path where the seed forbids it",
       "remove spec_path here; specialize with spec/spec_func or in trunk", "FT001"),
    _k("spec-path-unlisted", "policy", "warning", "spec_path in a directory the seed does not list",
       "add the directory to the policy or use spec/spec_func", "FT002"),
    _k("parent-child-hijack", "policy", "error", "a package and one of its sub-packages both call spec_path",
       "hijack only the parent (and ship the whole child) or only the child", "FT003"),
    _k("tle-specialized", "policy", "error", "experimental/tle is specialized",
       "adapt experimental/tle through its generic interface instead", "FT004"),
    _k("overlay-identical", "policy", "error", "an overlay identical to its trunk file",
       "delete the overlay: trunk already has this file", "FT005"),
    _k("overlay-contained", "policy", "error", "an overlay wholly contained in its trunk file (every statement is "
       "in it, or it is trunk with lines deleted)",
       "the overlay only leaves trunk code out for this backend: put that code behind a spec hook in trunk "
       "(spec/spec_func) and delete the overlay; deleting it alone brings the code back", "FT006"),
    _k("overlay-init-unused", "policy", "warning", "an overlay __init__.py, which is never loaded",
       "delete it: a package's __init__.py always comes from trunk", "FT007"),
    _k("spec-before-imports", "policy", "error", "spec(...) runs before the last import of an __init__.py",
       "move the spec(...) call below the last import of the __init__.py", "FT008"),
    _k("relative-import-in-spec-module", "policy", "error", "a relative import in a spec-function module",
       "use an absolute import (from triton.x import y): a relative one resolves inside the backend's spec "
       "package, not to the trunk module it names (the seed requires absolute imports there)", "FT009"),
    _k("backend-selection-in-trunk", "policy", "error", "trunk code compares or truth-tests FLAGTREE_BACKEND",
       "move backend-specific code into the backend's spec tree", "FT010"),
    _k("protected-file", "policy", "error", "a backend provides or shadows flagtree_spec.py/_flagtree_backend.py",
       "backends may not provide or shadow this file", "FT011"),
    _k("direct-edit-file", "policy", "warning", "knobs.py/_internal_testing.py specialized by hooks or a spec file",
       "specialize this file directly in trunk, as Triton does", "FT012"),
    _k("python-syntax", "policy", "error", "a Python file that does not parse", "fix the syntax error", "FT013"),
    _k("conflict-markers", "policy", "error", "committed conflict markers",
       "resolve the conflict, or list the file with --allow-markers", "FT014"),
    _k("provenance-stale", "policy", "error", "provenance.toml lists a file that does not exist",
       "rerun flagtree-sync provenance for this backend", "FT015"),
    _k("provenance-missing", "policy", "warning", "a backend file missing from its provenance.toml",
       "rerun flagtree-sync provenance so drift knows this file's base", "FT016"),
    _k("config-invalid", "policy", "error", "a pin, provenance.toml or suppressions.toml that breaks its schema",
       "fix the file", "FT017"),
    _k("layout-unrecognized", "policy", "warning", "trunk calls FlagTree hooks, or a backend keeps Python files, "
       "but no spec tree of a known layout was found: nothing of it was analysed",
       "use third_party/<b>/backend/spec/triton/ or python/triton/spec/<b>/, or name the layout in pyproject.toml "
       "[tool.flagtree-sync] spec_roots", "FT020"),
    _k("root-spec-file", "policy", "error", "a module at the root of the spec tree that replaces its trunk file "
       "whole: python/triton is every package's parent and cannot be overlaid",
       "knobs.py, _internal_testing.py: specialize in trunk directly; any other root module: use spec/spec_func",
       "FT018"),
    _k("overlay-unreachable", "policy", "warning", "a file below a hijacked package that Python never imports: a "
       "regular trunk package in between hides the backend's directory, which has no __init__.py",
       "add the __init__.py (the backend then ships that whole sub-package) or move the change into a spec function",
       "FT019", confidence="high"),
    _k("legacy-hook-import", "policy", "warning", "trunk imports spec, spec_func or spec_path from "
       "triton.runtime.driver, the hooks' old home: the seed's interface is python/triton/flagtree_spec.py",
       "import the hook from triton.flagtree_spec instead (from triton.flagtree_spec import spec)", "FT021"),
    _k("setup-copy", "policy", "warning", "a backend's setup helper copies its own files over trunk files when the "
       "wheel is built: overlays by a route the seed's hooks do not have, invisible in the source tree",
       "move each file to spec/triton/<rel> under a package that calls spec_path (or its changed functions into "
       "spec/spec_func) and drop the copy call; meanwhile drift merges each copy with its trunk file", "FT022"),
    _k("package-copy", "policy", "warning", "a backend's setup helper maps the triton package (or a sub-package) to "
       "a copy in its own tree: every file of it replaces trunk's, changed or not",
       "keep only the files that differ, as spec_path overlays or spec functions, and let trunk provide the rest; "
       "meanwhile drift merges every file of the copy with its trunk file", "FT023"),
    _k("renamed-copy", "policy", "warning", "a backend file whose content is (near) equal to a trunk file of "
       "another name: a copy that does not follow upstream's changes to that file",
       "import or subclass the trunk module instead of copying it; meanwhile merge upstream's changes to it into "
       "the copy (drift shows them)", "FT024", confidence="high"),
)

BY_ID: dict[str, Kind] = {kind.id: kind for kind in CATALOGUE}
BY_CODE: dict[str, Kind] = {kind.code: kind for kind in CATALOGUE if kind.code}


def kind_of(kind_id: str) -> Kind:
    """The catalogue entry; an unknown id is a programming error, caught by the catalogue test."""
    try:
        return BY_ID[kind_id]
    except KeyError:
        raise KeyError(f"finding kind {kind_id!r} is not in sync/model/kinds.py") from None


def rules() -> list[Kind]:
    """The policy rules, by rule id."""
    return sorted(BY_CODE.values(), key=lambda kind: kind.code or "")


def family(name: str) -> list[Kind]:
    return [kind for kind in CATALOGUE if kind.family == name]
