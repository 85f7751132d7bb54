#include "pyenv/discovery.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/strings.h"
#include "core/paths.h"

namespace sparkdoc::pyenv {
namespace {

constexpr size_t kMaxCfgBytes = 64 * 1024;

bool dir_exists(const Root& root, const std::string& path) {
  return is_dir(root.path(path));
}

// The pyvenv.cfg that makes `exe` a venv interpreter: Python looks next to the executable and
// one folder up, using the path as invoked (before symlinks are resolved: a venv's python3 is
// a link to the base interpreter).
std::optional<std::pair<std::string, PyvenvCfg>> venv_config_of(const Root& root,
                                                                const std::string& exe) {
  const std::string exe_dir = parent_path(exe);
  for (const std::string& dir : {exe_dir, parent_path(exe_dir)}) {
    auto text = read_text(root.path(join_path(dir, "pyvenv.cfg")), kMaxCfgBytes);
    if (text) return std::make_pair(dir, parse_pyvenv_cfg(*text));
  }
  return std::nullopt;
}

// The pyvenv.cfg at the root of an environment named by its folder.
std::optional<PyvenvCfg> prefix_config(const Root& root, const std::string& prefix) {
  auto text = read_text(root.path(join_path(prefix, "pyvenv.cfg")), kMaxCfgBytes);
  if (!text) return std::nullopt;
  return parse_pyvenv_cfg(*text);
}

// The python3.X folder under <prefix>/lib that this interpreter uses: the hinted version when
// that folder exists; else the only one; else the newest that holds packages.
std::string choose_python_version(const Root& root, const std::string& prefix,
                                  const std::string& hint) {
  auto names = list_dir(root.path(join_path(prefix, "lib")));
  std::vector<std::string> versions;
  if (names) {
    for (const std::string& name : *names) {
      auto version = python_major_minor(name);
      if (version && name == "python" + *version) versions.push_back(*version);
    }
  }
  if (!hint.empty() &&
      (versions.empty() || std::find(versions.begin(), versions.end(), hint) != versions.end())) {
    return hint;
  }
  if (versions.size() == 1) return versions.front();
  // "3.9" < "3.12" as text, so compare the minor numbers.
  auto minor = [](const std::string& v) { return parse_u64(v.substr(2)).value_or(0); };
  std::sort(versions.begin(), versions.end(),
            [&](const std::string& a, const std::string& b) { return minor(a) > minor(b); });
  for (const std::string& v : versions) {
    std::string lib = join_path(join_path(prefix, "lib"), "python" + v);
    if (dir_exists(root, join_path(lib, "site-packages")) ||
        dir_exists(root, join_path(lib, "dist-packages"))) {
      return v;
    }
  }
  return versions.empty() ? "" : versions.front();
}

// The folders sys.path holds for a prefix, as CPython's site.py (and Debian's patch of it)
// builds them; only those that exist.
std::vector<std::string> site_folders(const Root& root, const std::string& prefix,
                                      const std::string& version) {
  std::vector<std::string> wanted;
  if (!version.empty()) {
    const std::string py = "python" + version;
    // Debian and Ubuntu's python3 (and so every NGC container) puts pip installs in
    // /usr/local/lib/python3.X/dist-packages and apt's in /usr/lib/python3/dist-packages.
    if (prefix == "/usr") wanted.push_back("/usr/local/lib/" + py + "/dist-packages");
    wanted.push_back(prefix + "/lib/" + py + "/site-packages");
    wanted.push_back(prefix + "/lib64/" + py + "/site-packages");
    wanted.push_back(prefix + "/lib/python3/dist-packages");
    wanted.push_back(prefix + "/lib/" + py + "/dist-packages");
  } else {
    wanted.push_back(prefix + "/lib/python3/dist-packages");
  }
  std::vector<std::string> out;
  std::set<std::string> seen;  // resolved paths: a venv's lib64 is a link to lib
  for (std::string& dir : wanted) {
    dir = normalize_path(dir);
    if (!dir_exists(root, dir)) continue;
    std::string real = resolve_symlinks(root, dir).value_or(dir);
    if (seen.insert(real).second) out.push_back(dir);
  }
  return out;
}

std::string first_interpreter(const Root& root, const std::string& prefix) {
  for (const char* name : {"bin/python3", "bin/python"}) {
    std::string exe = join_path(prefix, name);
    if (exists(root.path(exe))) return exe;
  }
  return "";
}

// An environment from its prefix. A venv's pyvenv.cfg (when given) supplies the version and,
// with include-system-site-packages, the base interpreter's folders after the venv's own.
EnvCandidate from_prefix(const DiscoveryOptions& options, std::string source, std::string prefix,
                         std::string interpreter, const std::string& hint,
                         const std::optional<PyvenvCfg>& cfg) {
  const Root& root = options.root;
  EnvCandidate env;
  env.source = std::move(source);
  env.prefix = normalize_path(prefix);
  env.interpreter = interpreter.empty() ? first_interpreter(root, env.prefix) : interpreter;
  std::string version_hint = hint;
  if (cfg && !cfg->version.empty()) {
    version_hint = python_major_minor(cfg->version).value_or(version_hint);
  }
  env.python_version = choose_python_version(root, env.prefix, version_hint);
  env.site_packages = site_folders(root, env.prefix, env.python_version);
  if (cfg && cfg->include_system_site_packages && !cfg->home.empty()) {
    std::string home = normalize_path(cfg->home);
    std::string base = parent_path(resolve_symlinks(root, home).value_or(home));
    for (std::string& dir : site_folders(root, base, env.python_version)) {
      if (std::find(env.site_packages.begin(), env.site_packages.end(), dir) ==
          env.site_packages.end()) {
        env.site_packages.push_back(std::move(dir));
      }
    }
  }
  return env;
}

// An environment from an interpreter path. A venv is recognised before symlinks are followed;
// otherwise the prefix is the parent of the folder holding the real executable
// (/usr/bin/python3 -> python3.12 gives /usr).
std::optional<EnvCandidate> from_interpreter(const DiscoveryOptions& options, std::string source,
                                             const std::string& exe) {
  const Root& root = options.root;
  if (auto venv = venv_config_of(root, exe)) {
    return from_prefix(options, std::move(source), venv->first, exe, "", venv->second);
  }
  auto real = resolve_symlinks(root, exe);
  if (!real) return std::nullopt;
  std::string hint = python_major_minor(file_name(*real)).value_or("");
  return from_prefix(options, std::move(source), parent_path(parent_path(*real)), exe, hint,
                     std::nullopt);
}

// "python3.12" -> the first PATH entry holding it; a path is taken as given.
std::string locate(const DiscoveryOptions& options, const std::string& name) {
  if (name.find('/') != std::string::npos) return normalize_path(name);
  for (std::string_view dir : split(options.path, ':')) {
    if (dir.empty() || dir.front() != '/') continue;  // the current directory means nothing here
    std::string exe = join_path(dir, name);
    if (exists(options.root.path(exe))) return exe;
  }
  return "";
}

// An explicitly named site-packages folder: the prefix and version come from a
// <prefix>/lib/python3.X/{site,dist}-packages shape when it has one.
EnvCandidate from_site_packages(const DiscoveryOptions& options) {
  EnvCandidate env;
  env.source = "--site-packages";
  std::string dir = normalize_path(options.site_packages);
  env.site_packages.push_back(dir);
  std::string lib_python = parent_path(dir);
  auto version = python_major_minor(file_name(lib_python));
  if (version && file_name(parent_path(lib_python)) == "lib") {
    env.python_version = *version;
    env.prefix = parent_path(parent_path(lib_python));
    // Debian's /usr/local/lib/python3.X/dist-packages belongs to /usr's interpreter.
    if (env.prefix == "/usr/local" && file_name(dir) == "dist-packages") env.prefix = "/usr";
  } else {
    env.prefix = dir;
  }
  env.interpreter = first_interpreter(options.root, env.prefix);
  return env;
}

// The nearest .venv holding a pyvenv.cfg, from the working directory up; "" when none.
std::string project_venv(const DiscoveryOptions& options) {
  if (options.cwd.empty() || options.cwd.front() != '/') return "";
  std::string dir = normalize_path(options.cwd);
  for (int depth = 0; depth < 64; ++depth) {
    std::string venv = join_path(dir, ".venv");
    if (exists(options.root.path(join_path(venv, "pyvenv.cfg")))) return venv;
    if (dir == "/") break;
    dir = parent_path(dir);
  }
  return "";
}

// The first word of a pyenv version file or of $PYENV_VERSION ("3.12.7:3.11.9" -> "3.12.7").
std::string first_pyenv_version(std::string_view text) {
  for (std::string_view line : lines(text)) {
    line = trim(line);
    if (line.empty() || line.starts_with('#')) continue;
    std::string_view word = split_ws(line).front();
    return std::string(word.substr(0, word.find(':')));
  }
  return "";
}

// The environment a pyenv shim in `shims` runs, resolved as pyenv resolves it; nullopt when
// the folder is no pyenv's, the version is "system" (the next python3 on PATH), or the version
// is not installed.
std::optional<EnvCandidate> from_pyenv_shim(const DiscoveryOptions& options,
                                            const std::string& shims) {
  if (file_name(shims) != "shims") return std::nullopt;
  std::string root =
      options.pyenv_root.empty() ? parent_path(shims) : normalize_path(options.pyenv_root);
  if (!is_dir(options.root.path(join_path(root, "versions")))) return std::nullopt;
  std::string version = first_pyenv_version(options.pyenv_version);
  if (version.empty() && !options.cwd.empty() && options.cwd.front() == '/') {
    std::string dir = normalize_path(options.cwd);
    for (int depth = 0; depth < 64 && version.empty(); ++depth) {
      if (auto text = read_text(options.root.path(join_path(dir, ".python-version")), 4096)) {
        version = first_pyenv_version(*text);
      }
      if (dir == "/") break;
      dir = parent_path(dir);
    }
  }
  if (version.empty()) {
    if (auto text = read_text(options.root.path(join_path(root, "version")), 4096)) {
      version = first_pyenv_version(*text);
    }
  }
  if (version.empty() || version == "system" || version.find('/') != std::string::npos) {
    return std::nullopt;
  }
  std::string prefix = join_path(join_path(root, "versions"), version);
  if (!is_dir(options.root.path(prefix))) return std::nullopt;
  return from_prefix(options, "pyenv", prefix, "", python_major_minor(version).value_or(""),
                     prefix_config(options.root, prefix));
}

}  // namespace

PyvenvCfg parse_pyvenv_cfg(std::string_view text) {
  PyvenvCfg cfg;
  for (std::string_view line : lines(text)) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key = to_lower(trim(line.substr(0, eq)));
    std::string_view value = trim(line.substr(eq + 1));
    if (key == "home") {
      cfg.home = std::string(value);
    } else if (key == "version" || (key == "version_info" && cfg.version.empty())) {
      cfg.version = std::string(value);
    } else if (key == "include-system-site-packages") {
      cfg.include_system_site_packages = to_lower(value) == "true";
    }
  }
  return cfg;
}

std::optional<std::string> python_major_minor(std::string_view text) {
  if (text.starts_with("python")) text.remove_prefix(6);
  if (text.size() < 3 || text[0] != '3' || text[1] != '.') return std::nullopt;
  size_t end = 2;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == 2 || end - 2 > 3) return std::nullopt;
  return std::string(text.substr(0, end));
}

std::vector<EnvCandidate> find_environments(const DiscoveryOptions& options) {
  std::vector<EnvCandidate> out;
  auto add = [&](EnvCandidate env, bool keep_empty) {
    if (env.site_packages.empty() && !keep_empty) return false;
    for (const EnvCandidate& seen : out) {
      if (seen.prefix == env.prefix) return true;
    }
    out.push_back(std::move(env));
    return true;
  };
  if (!options.python.empty()) {
    std::string exe = locate(options, options.python);
    std::optional<EnvCandidate> env;
    if (!exe.empty() && is_dir(options.root.path(exe))) {
      // An environment's folder rather than its interpreter: take it as the prefix.
      env = from_prefix(options, "--python", exe, "", "", prefix_config(options.root, exe));
    } else if (!exe.empty()) {
      env = from_interpreter(options, "--python", exe);
    }
    if (!env) {
      // Named but not found: still listed, so the report names what was asked for.
      env = EnvCandidate{"--python",
                         exe.empty() ? "" : parent_path(parent_path(exe)),
                         exe.empty() ? options.python : exe,
                         "",
                         {}};
    }
    add(std::move(*env), true);
  }
  if (!options.site_packages.empty()) add(from_site_packages(options), true);
  if (!options.virtual_env.empty()) {
    std::string prefix = normalize_path(options.virtual_env);
    add(from_prefix(options, "VIRTUAL_ENV", prefix, "", "", prefix_config(options.root, prefix)),
        false);
  }
  if (!options.conda_prefix.empty()) {
    add(from_prefix(options, "CONDA_PREFIX", normalize_path(options.conda_prefix), "", "",
                    std::nullopt),
        false);
  }
  if (std::string venv = project_venv(options); !venv.empty()) {
    add(from_prefix(options, ".venv", venv, "", "", prefix_config(options.root, venv)), false);
  }
  for (std::string_view dir : split(options.path, ':')) {
    if (dir.empty() || dir.front() != '/') continue;
    std::string exe = join_path(normalize_path(dir), "python3");
    if (!exists(options.root.path(exe)) || is_dir(options.root.path(exe))) continue;
    if (auto shim = from_pyenv_shim(options, normalize_path(dir))) {
      if (add(std::move(*shim), false)) break;
      continue;
    }
    auto env = from_interpreter(options, "PATH", exe);
    // The first python3 that belongs to an environment is the one `python3` runs; a wrapper
    // script (a pyenv shim, say) has no site-packages of its own, so look further.
    if (env && add(std::move(*env), false)) break;
  }
  return out;
}

}  // namespace sparkdoc::pyenv
