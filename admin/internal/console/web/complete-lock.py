"""Adds lockfile entries for optional platform packages this machine's npm
registry mirror does not serve (npm then leaves them out of
package-lock.json, and `npm ci` refuses the lockfile). Each entry names the
package's version, os and cpu from its name, and is optional: npm ci skips
it on any other platform, as it would with the registry's own entry.
Run after `npm install`: python3 complete-lock.py"""
import json
import re

lock = json.load(open("package-lock.json"))
pkgs = lock["packages"]
added = 0
for path, meta in list(pkgs.items()):
    for dep, spec in (meta.get("optionalDependencies") or {}).items():
        if "node_modules/" + dep in pkgs or (path and path + "/node_modules/" + dep in pkgs):
            continue
        name = dep.split("/")[-1]
        os_ = next((o for o in ["android", "darwin", "freebsd", "linux", "openbsd", "netbsd", "sunos", "aix", "win32", "openharmony"] if o in name), None)
        cpu = next((c for c in ["arm64", "x64", "ia32", "arm", "loong64", "mips64el", "ppc64", "riscv64", "s390x", "wasm32"] if re.search(r"(^|-)" + c + r"($|-)", name)), None)
        entry = {"version": re.sub(r"^[\^~]", "", spec), "optional": True}
        if os_:
            entry["os"] = [os_]
        if cpu:
            entry["cpu"] = [cpu]
        if "wasm32" in name:
            entry["cpu"] = ["wasm32"]
        pkgs["node_modules/" + dep] = entry
        added += 1
lock["packages"] = dict(sorted(pkgs.items(), key=lambda kv: (kv[0] != "", kv[0])))
json.dump(lock, open("package-lock.json", "w"), indent=2)
open("package-lock.json", "a").write("\n")
print("added", added, "entries")
