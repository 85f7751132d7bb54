// What sparkdoc reads of a Python training script without running it (job/python_source.h
// reads it): the imports and what each bound name stands for, every call with its arguments
// as literal values where they are literals, and the assignments. The lint rules judge these.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::job {

struct PyCall;

// An expression as far as the rules read it: a literal, a (dotted, import-resolved) name, a
// call, a list, tuple or dict of those, or something else kept as its source text.
struct PyValue {
  enum class Kind : uint8_t {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kTuple,
    kDict,
    kName,
    kCall,
    kOther
  };
  Kind kind = Kind::kOther;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;  // kFloat; kInt too
  // kString: the value (f-strings: as written, with fstring set); kName: the dotted name
  // resolved through the imports ("torch.bfloat16"); kOther and kCall: the source text.
  std::string text;
  bool fstring = false;
  std::vector<PyValue> items;          // kList, kTuple; kDict: key, value, key, value ...
  std::shared_ptr<const PyCall> call;  // kCall
  uint32_t line = 0;

  bool is_true() const { return kind == Kind::kBool && boolean; }
  bool is_false() const { return kind == Kind::kBool && !boolean; }
  // The string value of a constant string; nullopt for anything else (an f-string too).
  std::optional<std::string> string() const {
    if (kind == Kind::kString && !fstring) return text;
    return std::nullopt;
  }
  std::optional<double> numeric() const {
    if (kind == Kind::kInt || kind == Kind::kFloat) return number;
    return std::nullopt;
  }
  // A dict's value for a constant string key; nullptr when there is none.
  const PyValue* entry(std::string_view key) const;
};

struct PyArg {
  std::string keyword;  // "" positional; "*" and "**" for unpacked arguments
  PyValue value;
};

struct PyCall {
  std::string callee;   // resolved through the imports: "unsloth.FastModel.from_pretrained"
  std::string written;  // as written: "FM.from_pretrained"
  std::vector<PyArg> args;
  uint32_t line = 0;
  bool unpacks_kwargs = false;  // a ** argument: keywords beyond those listed may be set

  // The keyword argument `name`; nullptr when not given.
  const PyValue* keyword(std::string_view name) const;
  // The n-th positional argument; nullptr when there are fewer.
  const PyValue* positional(size_t n) const;
  // The callee's last part: "from_pretrained".
  std::string_view method() const;
};

struct PyAssignment {
  std::string target;  // as written: "args", "tokenizer.pad_token", "os.environ['X']"
  PyValue value;
  uint32_t line = 0;
};

struct PyImport {
  std::string name;       // the name it binds in the module ("FM")
  std::string qualified;  // what it stands for ("unsloth.FastModel")
  uint32_t line = 0;
};

struct PySource {
  std::vector<PyImport> imports;
  std::vector<PyCall> calls;  // every call, in source order (an outer call before its arguments')
  std::vector<PyAssignment> assignments;
  // Lines whose comment says "sparkdoc: ignore ID[,ID...]": the rule IDs not to report there.
  std::map<uint32_t, std::vector<std::string>> ignored;
  uint32_t lines = 0;
  bool truncated = false;  // nesting beyond what the reader follows: part of a line skipped

  // The value last assigned to `name` before `line`; nullptr when none.
  const PyValue* value_of(std::string_view name, uint32_t line) const;
  // Whether the module imports `module` or anything from it ("unsloth", "trl").
  bool imports_from(std::string_view module) const;
};

}  // namespace sparkdoc::job
