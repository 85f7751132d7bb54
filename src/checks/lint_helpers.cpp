#include "checks/lint_helpers.h"

#include <algorithm>

#include "core/names.h"
#include "core/strings.h"

namespace sparkdoc::checks::lint {
namespace {

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return s.starts_with(p); });
}

std::string_view last_part(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

// The class part of "transformers.AutoModelForCausalLM.from_pretrained".
std::string_view class_part(std::string_view callee) {
  size_t dot = callee.rfind('.');
  if (dot == std::string_view::npos) return {};
  return last_part(callee.substr(0, dot));
}

}  // namespace

void for_each_call(const job::Job& job,
                   const std::function<void(const job::JobFile&, const job::PyCall&)>& fn) {
  for (const job::JobFile& f : job.files) {
    if (f.kind != job::FileKind::kPython) continue;
    for (const job::PyCall& c : f.python.calls) fn(f, c);
  }
}

bool is_model_load(const job::PyCall& call) {
  if (call.method() != "from_pretrained") return false;
  // diffusers' models and pipelines load with from_pretrained too, and keep torch_dtype=.
  if (call.callee.starts_with("diffusers.")) return false;
  std::string_view cls = class_part(call.callee);
  if (cls == "FastModel" || cls == "FastLanguageModel" || cls == "FastVisionModel") return true;
  if (cls.find("Tokenizer") != std::string_view::npos ||
      cls.find("Processor") != std::string_view::npos ||
      cls.find("Config") != std::string_view::npos ||
      cls.find("ImageProcessor") != std::string_view::npos) {
    return false;
  }
  return cls.starts_with("AutoModel") || cls.find("For") != std::string_view::npos ||
         cls.ends_with("Model") || starts_with_any(call.callee, {"transformers.", "peft."});
}

bool is_tokenizer_load(const job::PyCall& call) {
  if (call.method() != "from_pretrained") return false;
  std::string_view cls = class_part(call.callee);
  return cls.find("Tokenizer") != std::string_view::npos;
}

std::optional<std::string> loaded_model(const job::PyCall& call) {
  for (std::string_view key : {"model_name", "pretrained_model_name_or_path", "model_id"}) {
    if (const job::PyValue* v = call.keyword(key)) {
      if (auto s = v->string()) return s;
    }
  }
  if (const job::PyValue* v = call.positional(0)) {
    if (auto s = v->string()) return s;
  }
  return std::nullopt;
}

const ModelFamily* file_model_family(const job::JobFile& file) {
  for (const job::PyCall& c : file.python.calls) {
    if (!is_model_load(c) && !is_tokenizer_load(c)) continue;
    std::optional<std::string> id = loaded_model(c);
    if (!id) {
      // model_name=model_id with `model_id = "..."` earlier.
      for (std::string_view key : {"model_name", "pretrained_model_name_or_path"}) {
        if (const job::PyValue* v = resolved(file, c.keyword(key), c.line)) id = v->string();
      }
      if (!id) {
        if (const job::PyValue* v = resolved(file, c.positional(0), c.line)) id = v->string();
      }
    }
    if (id) {
      if (const ModelFamily* f = family_for_model(*id)) return f;
    }
  }
  return nullptr;
}

const job::PyValue* resolved(const job::JobFile& file, const job::PyValue* value, uint32_t line) {
  for (int hops = 0; value != nullptr && value->kind == job::PyValue::Kind::kName && hops < 8;
       ++hops) {
    const job::PyValue* next = file.python.value_of(value->text, line);
    if (next == nullptr) break;
    value = next;
  }
  return value;
}

bool constructs(const job::PyCall& call, std::initializer_list<std::string_view> classes) {
  std::string_view name = last_part(call.callee);
  return std::find(classes.begin(), classes.end(), name) != classes.end();
}

bool has_commands(const job::JobFile& file) {
  switch (file.kind) {
    case job::FileKind::kShell:
    case job::FileKind::kDockerfile:
    case job::FileKind::kMakefile:
    case job::FileKind::kCompose:
    case job::FileKind::kCommandLine:
      return true;
    default:
      return false;
  }
}

bool ContainerRun::has(std::string_view name, std::string_view value) const {
  for (size_t i = 0; i < options.size(); ++i) {
    std::string_view o = options[i];
    if (o == name) {
      if (value.empty()) return true;
      if (i + 1 < options.size() && options[i + 1] == value) return true;
    }
    if (o.size() > name.size() && o.starts_with(name) && o[name.size()] == '=') {
      if (value.empty() || o.substr(name.size() + 1) == value) return true;
    }
  }
  return false;
}

std::vector<std::string> ContainerRun::values(std::string_view name) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < options.size(); ++i) {
    std::string_view o = options[i];
    if (o == name && i + 1 < options.size()) out.push_back(options[i + 1]);
    if (o.size() > name.size() && o.starts_with(name) && o[name.size()] == '=') {
      out.emplace_back(o.substr(name.size() + 1));
    }
  }
  return out;
}

bool ContainerRun::uses_gpu() const {
  if (has("--gpus") || has("--runtime", "nvidia") || has("--privileged")) return true;
  for (const std::string& d : values("--device")) {
    if (d.find("nvidia") != std::string::npos) return true;
  }
  for (const std::string& e : values("-e")) {
    if (e.starts_with("NVIDIA_VISIBLE_DEVICES")) return true;
  }
  for (const std::string& e : values("--env")) {
    if (e.starts_with("NVIDIA_VISIBLE_DEVICES")) return true;
  }
  return false;
}

uint32_t line_of(const job::PyCall& call, const job::PyValue* value) {
  return value != nullptr && value->line != 0 ? value->line : call.line;
}

bool ContainerRun::host_maintenance() const {
  static constexpr std::array<std::string_view, 8> kBaseImages{
      "alpine", "busybox", "debian", "ubuntu", "fedora", "centos", "rockylinux", "almalinux"};
  std::string_view name = image;
  if (size_t slash = name.rfind('/'); slash != std::string_view::npos)
    name.remove_prefix(slash + 1);
  name = name.substr(0, name.find_first_of(":@"));
  if (std::find(kBaseImages.begin(), kBaseImages.end(), name) == kBaseImages.end()) return false;
  if (has("--gpus") || has("--runtime", "nvidia")) return false;
  for (const std::string& e : values("-e")) {
    if (e.starts_with("NVIDIA_VISIBLE_DEVICES")) return false;
  }
  for (const std::string& e : values("--env")) {
    if (e.starts_with("NVIDIA_VISIBLE_DEVICES")) return false;
  }
  return true;
}

bool ContainerRun::inline_python() const {
  if (command == nullptr || image.empty()) return false;
  const auto& a = command->argv;
  const size_t at = run_at + 1 + options.size() + 1;  // the word after the image
  if (at + 1 >= a.size()) return false;
  std::string_view program = a[at];
  if (size_t slash = program.rfind('/'); slash != std::string_view::npos)
    program.remove_prefix(slash + 1);
  return program.starts_with("python") && a[at + 1] == "-c";
}

std::vector<ContainerRun> container_runs(const job::Job& job) {
  // docker run options that take a value (the rest are flags); enough to find the image.
  static constexpr std::array<std::string_view, 28> kWithValue{
      "-e",         "--env",      "-v",
      "--volume",   "--mount",    "--name",
      "-w",         "--workdir",  "--gpus",
      "--runtime",  "--device",   "--ulimit",
      "--ipc",      "--shm-size", "-p",
      "--publish",  "--network",  "--net",
      "-u",         "--user",     "--oom-score-adj",
      "--memory",   "-m",         "--entrypoint",
      "--env-file", "--cpus",     "--restart",
      "--platform"};
  std::vector<ContainerRun> out;
  for (const job::JobFile& f : job.files) {
    if (!has_commands(f)) continue;
    for (const job::Command& c : f.commands) {
      const auto& a = c.argv;
      for (size_t i = 0; i + 1 < a.size(); ++i) {
        bool engine = a[i] == "docker" || a[i] == "podman" || a[i] == "nerdctl";
        if (!engine) continue;
        size_t run = i + 1;
        if (a[run] == "container" && run + 1 < a.size()) ++run;
        if (a[run] != "run") continue;
        ContainerRun r;
        r.file = &f;
        r.command = &c;
        r.run_at = run;
        size_t k = run + 1;
        while (k < a.size()) {
          std::string_view w = a[k];
          if (!w.starts_with("-")) break;
          r.options.emplace_back(w);
          const bool inline_value = w.find('=') != std::string_view::npos;
          if (!inline_value &&
              std::find(kWithValue.begin(), kWithValue.end(), w) != kWithValue.end() &&
              k + 1 < a.size()) {
            r.options.push_back(a[k + 1]);
            ++k;
          }
          ++k;
        }
        if (k < a.size()) r.image = a[k];
        out.push_back(std::move(r));
        break;
      }
    }
  }
  return out;
}

std::optional<std::string> env_set(const job::JobFile& file, std::string_view name, uint32_t line,
                                   const job::Command* command) {
  if (command != nullptr) {
    if (auto v = command->env_value(name)) return v;
  }
  std::optional<std::string> found;
  for (const job::DockerInstruction& d : file.docker) {
    if (d.line > line) break;
    if (d.keyword != "ENV" && d.keyword != "ARG") continue;
    for (const std::string_view part : split_ws(d.args)) {
      if (part.starts_with(std::string(name) + "=")) {
        std::string v(part.substr(name.size() + 1));
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
          v = v.substr(1, v.size() - 2);
        }
        found = v;
      }
    }
    // The legacy form "ENV NAME value".
    auto words = split_ws(d.args);
    if (d.keyword == "ENV" && words.size() >= 2 && words[0] == name) found = std::string(words[1]);
  }
  for (const job::Command& c : file.commands) {
    if (c.line > line) break;
    if (c.argv.size() >= 2 && c.argv[0] == "export") {
      for (size_t i = 1; i < c.argv.size(); ++i) {
        std::string_view w = c.argv[i];
        if (w.starts_with(std::string(name) + "=")) found = std::string(w.substr(name.size() + 1));
      }
    }
    // `X=1` alone on a line sets a shell variable that later commands see once exported.
    if (c.argv.empty()) {
      for (const auto& [k, v] : c.env) {
        if (k == name) found = v;
      }
    }
  }
  for (const job::PyAssignment& a : file.python.assignments) {
    if (a.line > line && line != 0) break;
    if ((a.target == "os.environ[\"" + std::string(name) + "\"]" ||
         a.target == "os.environ['" + std::string(name) + "']")) {
      if (auto s = a.value.string()) found = s;
    }
  }
  return found;
}

bool Install::names(std::string_view package) const {
  std::string want = pep503_name(package);
  return std::find(packages.begin(), packages.end(), want) != packages.end();
}

std::vector<Install> installs(const job::Job& job) {
  std::vector<Install> out;
  for (const job::JobFile& f : job.files) {
    if (!has_commands(f)) continue;
    for (const job::Command& c : f.commands) {
      const auto& a = c.argv;
      size_t at = 0;
      bool found = false;
      for (size_t i = 0; i + 1 < a.size(); ++i) {
        std::string_view w = a[i];
        bool pip = w == "pip" || w == "pip3" || w.ends_with("/pip") || w.ends_with("/pip3");
        if (pip && a[i + 1] == "install") {
          at = i + 2;
          found = true;
          break;
        }
        if (w == "-m" && (a[i + 1] == "pip" || a[i + 1] == "uv") && i + 2 < a.size() &&
            a[i + 2] == "install") {
          at = i + 3;
          found = true;
          break;
        }
        if (w == "uv" && a[i + 1] == "pip" && i + 2 < a.size() && a[i + 2] == "install") {
          at = i + 3;
          found = true;
          break;
        }
        if (w == "uv" && a[i + 1] == "add") {
          at = i + 2;
          found = true;
          break;
        }
      }
      if (!found) continue;
      Install in;
      in.file = &f;
      in.command = &c;
      for (size_t k = at; k < a.size(); ++k) {
        std::string_view w = a[k];
        if (w == "--no-deps") in.no_deps = true;
        if (w == "--no-build-isolation") in.no_build_isolation = true;
        if (w == "--no-binary" || w.starts_with("--no-binary=")) {
          in.no_binary = true;
          if (w == "--no-binary") ++k;
          continue;
        }
        if (w == "-r" || w == "-c" || w == "--index-url" || w == "--extra-index-url" || w == "-i" ||
            w == "--target" || w == "-t" || w == "--python") {
          ++k;
          continue;
        }
        if (w.starts_with("-")) continue;
        // git+https://github.com/unslothai/unsloth.git -> unsloth; "x==1" -> x; "x[extra]" -> x.
        std::string name(w);
        if (name.find("://") != std::string::npos) {
          if (size_t egg = name.find("#egg="); egg != std::string::npos) {
            name = name.substr(egg + 5);
          } else {
            std::string_view path = std::string_view(name).substr(name.rfind('/') + 1);
            if (path.ends_with(".git")) path.remove_suffix(4);
            name = std::string(path);
          }
        }
        size_t cut = name.find_first_of("=<>!~[;@ ");
        if (cut != std::string::npos) name = name.substr(0, cut);
        if (!name.empty() && name != "." && name.front() != '/')
          in.packages.push_back(pep503_name(name));
      }
      out.push_back(std::move(in));
    }
  }
  return out;
}

}  // namespace sparkdoc::checks::lint
