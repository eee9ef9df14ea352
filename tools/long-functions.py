#!/usr/bin/env python3
"""Lists the functions of ours (core/, ui/, app/) longer than a limit, longest first.

    tools/long-functions.py [--limit 120] [PATH ...]

A function is a brace block opened at namespace or class level whose head ends with ')' (plus
qualifiers such as const, override, noexcept, or a trailing return type); its length counts the
lines from the head to the closing brace. A heuristic for this code base's style, not a parser:
lambdas and blocks inside functions count toward the function around them.
"""
import argparse, pathlib, re, sys

HEAD = re.compile(r"\)\s*(const|override|noexcept|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$")
NOT_FUNCTION = re.compile(r"^\s*(if|for|while|switch|catch|else|do)\b|=\s*\[|\bnamespace\b|\bstruct\b|\bclass\b|\benum\b")


def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//")[0]


def functions(path):
    lines = path.read_text(errors="replace").splitlines()
    depth, stack, out, head = 0, [], [], ""
    in_comment = False
    for i, raw in enumerate(lines):
        line = raw
        if in_comment:
            if "*/" not in line:
                continue
            line, in_comment = line.split("*/", 1)[1], False
        if "/*" in line and "*/" not in line.split("/*", 1)[1]:
            line, in_comment = line.split("/*", 1)[0], True
        code = strip(line)
        for ch in code:
            if ch == "{":
                text = (head + " " + code.split("{")[0]).strip()
                kind = "function" if (HEAD.search(text) and not NOT_FUNCTION.search(text)
                                      and not (stack and stack[-1][0] == "function")) else "block"
                name = re.sub(r"\s+", " ", text)[-90:]
                stack.append((kind, i, name))
                depth += 1
            elif ch == "}" and stack:
                kind, start, name = stack.pop()
                depth -= 1
                if kind == "function":
                    hs = start
                    while hs > 0 and lines[hs - 1].strip() and not lines[hs - 1].strip().endswith((";", "}", "{")) \
                            and not lines[hs - 1].lstrip().startswith(("//", "#")):
                        hs -= 1
                    out.append((i - hs + 1, f"{path}:{hs + 1}", name))
        stripped = code.strip()
        head = "" if stripped.endswith((";", "{", "}")) or not stripped else (head + " " + stripped)[-400:]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("paths", nargs="*", default=["core", "ui", "app"])
    a = ap.parse_args()
    found = []
    for p in a.paths:
        for f in sorted(pathlib.Path(p).rglob("*")):
            if f.suffix in (".cpp", ".h", ".cc", ".hpp") and f.is_file():
                found += functions(f)
    long = sorted((x for x in found if x[0] > a.limit), reverse=True)
    for n, where, name in long:
        print(f"{n:5d}  {where}  {name}")
    print(f"{len(long)} functions over {a.limit} lines", file=sys.stderr)
    return 0


sys.exit(main())
