"""Builder signatures TableGen generates: Attr/Type `get` from `parameters = (ins ...)` and builders,
Op `create`/`build` from `arguments`, `results` and `builders`. Facts only, read with regexes over
the .td text (records are flat enough for that); used by the call-signature analysis."""
from __future__ import annotations

import re
from dataclasses import dataclass

_DEF = re.compile(r"^def\s+(\w+)\s*:\s*([^{;]*)\{", re.MULTILINE)
_ARG = re.compile(r'([^,$]*?)\s*:\s*\$(\w+)')
_BUILDER = re.compile(r"\b(\w*Builder\w*)\s*<\s*\(\s*ins\b")


@dataclass(frozen=True)
class Overload:
    params: tuple[tuple[str, str], ...]  # (type as written, name), without context/builder/loc
    required: int  # parameters without a default
    leading: int  # extra leading arguments the call passes (MLIRContext* for a non-inferred get)

    def fits(self, count: int) -> bool:
        return self.leading + self.required <= count <= self.leading + len(self.params)

    def text(self) -> str:
        return "(" + ", ".join(name for _, name in self.params) + ")"


@dataclass(frozen=True)
class Record:
    cpp_name: str  # the generated class, e.g. MemDescType, TensorMemoryEncodingAttr, LoadOp
    kind: str  # attr | type | op
    path: str
    source: str  # the record as written (for the finding's diff)
    overloads: tuple[Overload, ...]


def _balanced(text: str, start: int, opening: str, closing: str) -> int:
    """Index just past the bracket that closes the one at start."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == opening:
            depth += 1
        elif text[index] == closing:
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def _ins_list(body: str, start: int) -> tuple[list[tuple[str, str]], int]:
    """The `(ins ...)` dag starting at the '(' at start: (type, name) pairs and how many trailing entries carry a
    default value (a quoted `"type":$x` carries none)."""
    end = _balanced(body, start, "(", ")")
    inner = body[start + 1:end - 1]
    inner = re.sub(r"//[^\n]*", "", inner)
    inner = re.sub(r"^\s*ins\b", "", inner)
    pairs, depth, current = [], 0, ""
    for char in inner + ",":
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
        if char == "," and depth == 0:
            pairs.append(current.strip())
            current = ""
        else:
            current += char
    params, defaults = [], 0
    for item in pairs:
        match = re.search(r":\s*\$(\w+)\s*$", item)
        if not match:
            continue
        kind = item[:match.start()].strip()
        params.append((kind, match[1]))
    for kind, _ in reversed(params):  # only trailing defaults become C++ default arguments
        if _DEFAULTED.match(kind):
            defaults += 1
        else:
            break
    return params, defaults


# An `ins` entry with a default value: CArg's second argument, a parameter or attribute wrapper that declares one.
_DEFAULTED = re.compile(r"(CArg\s*<[^,]+,|DefaultValued|OptionalAttr|OptionalParameter|UnitAttr)")


def _field(body: str, name: str) -> tuple[list[tuple[str, str]], int] | None:
    match = re.search(rf"\blet\s+{name}\s*=\s*\(", body)
    return _ins_list(body, match.end() - 1) if match else None


def _cpp_names(name: str, parents: str) -> list[str]:
    names = [name.split("_", 1)[1] if "_" in name else name]
    template = re.search(r'(AttrDef|TypeDef|_AttrDef|_TypeDef|_Attr|_Type)\w*\s*<[^">]*"(\w+)"', parents)
    if template:
        suffix = "Type" if "Type" in template[1] else "Attr"
        names.append(template[2] + ("" if template[2].endswith(suffix) else suffix))
    return list(dict.fromkeys(names))


# `def X : AttrOrTypeParameter<"::ns::CGAEncodingAttr", ...>`: a named parameter kind and the C++ type it stands for
_PARAMETER_DEF = re.compile(r'^def\s+(\w+)\s*:\s*(?:AttrOrType|Attr|Type)Parameter\s*<\s*"([^"]+)"', re.MULTILINE)


def records(path: str, text: str) -> list[Record]:
    """Every attribute, type and op record of a .td text with its builders. A parameter whose kind is a
    parameter def of the same text is given the C++ type that def names (quoted, as a written type is)."""
    found: list[Record] = []
    named = {name: f'"{cpp}"' for name, cpp in _PARAMETER_DEF.findall(text)}
    for match in _DEF.finditer(text):
        end = _balanced(text, match.end() - 1, "{", "}")
        body = text[match.end():end - 1]
        parents = match[2]
        params = _field(body, "parameters")
        if params is not None and named:
            params = ([(named.get(kind, kind), name) for kind, name in params[0]], params[1])
        arguments = _field(body, "arguments")
        if params is None and arguments is None:
            continue
        overloads: list[Overload] = []
        skip_default = re.search(r"\bskipDefaultBuilders\s*=\s*1", body) is not None
        for builder in _BUILDER.finditer(body):
            pairs, defaults = _ins_list(body, body.index("(", builder.start()))
            inferred = "InferredContext" in builder[1] or params is None
            overloads.append(Overload(tuple(pairs), len(pairs) - defaults, 0 if inferred else 1))
        if params is not None:
            kind = "type" if re.search(r"Type", parents) else "attr"
            if not skip_default:
                # ODS's default `get(context, params...)` takes every parameter with no C++ default, whatever
                # the parameter's own default (DefaultValuedParameter fills the parsed form, not the builder):
                # only a custom builder's `ins` (CArg<"T", "v">, or a parameter with a default) gives defaults.
                pairs, _ = params
                overloads.append(Overload(tuple(pairs), len(pairs), 1))
        else:
            kind = "op"
            if not skip_default and arguments is not None:
                pairs, defaults = arguments
                results = _field(body, "results")
                outs = len(results[0]) if results else 0
                overloads.append(Overload(tuple(pairs), len(pairs) - defaults, 0))  # result types inferred
                typed = tuple((f"result type {i}", f"resultType{i}") for i in range(outs)) + tuple(pairs)
                overloads.append(Overload(typed, len(typed) - defaults, 0))
                overloads.append(Overload((("TypeRange", "resultTypes"), ("ValueRange", "operands"),
                                           ("ArrayRef<NamedAttribute>", "attributes")), 2, 0))
        for cpp_name in _cpp_names(match[1], parents):
            found.append(Record(cpp_name, kind, path, text[match.start():end], tuple(overloads)))
    return found

