#include "cli/docs.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"

namespace sparkdoc::cli {
namespace {

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::vector<const CLI::Option*> options_of(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return o->nonpositional(); });
}

std::vector<const CLI::Option*> positionals_of(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

// Every spelling of an option, short ones first: {"-o", "--output"}.
std::vector<std::string> spellings(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const auto& s : option.get_snames()) names.push_back("-" + s);
  for (const auto& l : option.get_lnames()) names.push_back("--" + l);
  return names;
}

bool takes_value(const CLI::Option& option) {
  return !option.get_type_name().empty() && option.get_expected_max() > 0;
}

// What the value of an option names, for completion: a folder, a file (or path), or neither.
enum class ValueKind { kNone, kFile, kDirectory };

ValueKind value_kind(const CLI::Option& option) {
  if (!takes_value(option)) return ValueKind::kNone;
  const std::string type = option.get_type_name();
  if (type.find("DIR") != std::string::npos) return ValueKind::kDirectory;
  if (type.find("FILE") != std::string::npos || type.find("PATH") != std::string::npos ||
      type.find("SNAP") != std::string::npos || type.find("LOG") != std::string::npos) {
    return ValueKind::kFile;
  }
  return ValueKind::kNone;
}

// The type name as --help shows it, without CLI11's "=default" suffix.
std::string value_name(const CLI::Option& option) {
  std::string type = option.get_type_name();
  if (auto eq = type.find('='); eq != std::string::npos) type.resize(eq);
  return type;
}

std::string_view summary_of(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return command.summary;
  }
  return {};
}

// The first sentence of a description, at most `limit` characters, for completion menus.
std::string first_sentence(std::string_view text, size_t limit) {
  std::string out(text.substr(0, text.find('\n')));
  if (auto stop = out.find(". "); stop != std::string::npos) out.resize(stop);
  if (out.size() > limit) out = out.substr(0, limit - 3) + "...";
  return out;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// The .TH line: name, section, date, source, manual.
std::string title(std::string_view name, std::string_view version, std::string_view date) {
  return ".TH " + upper(name) + " 1 \"" + std::string(date) + "\" \"sparkdoc " +
         std::string(version) + "\" \"sparkdoc manual\"\n";
}

// --help text as roff: blank lines separate paragraphs, other line breaks stay, and indented
// lines (examples, tables) keep their layout in an indented no-fill block.
std::string paragraphs(std::string_view text) {
  std::string out;
  enum class State { kNone, kFilled, kLiteral } state = State::kNone;
  size_t block_indent = 0;  // the first literal line's indentation, which the block drops
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    const bool blank = line.find_first_not_of(' ') == std::string_view::npos;
    const bool indented = !blank && line[0] == ' ';
    if (state == State::kLiteral && !indented) {
      out += ".fi\n.RE\n";
      state = State::kNone;
    }
    if (blank) {
      state = State::kNone;
    } else if (indented) {
      const size_t indent = line.find_first_not_of(' ');
      if (state != State::kLiteral) {
        out += ".RS 2\n.nf\n";
        block_indent = indent;
      }
      state = State::kLiteral;
      out += roff_escape(line.substr(std::min(indent, block_indent))) + "\n";
    } else {
      out += state == State::kFilled ? ".br\n" : ".PP\n";
      out += roff_escape(line) + "\n";
      state = State::kFilled;
    }
    begin = end + 1;
  }
  if (state == State::kLiteral) out += ".fi\n.RE\n";
  return out;
}

// Examples and other footers keep their layout: a no-fill block.
std::string literal_block(std::string_view text) {
  std::string out = ".PP\n.nf\n";
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    out += roff_escape(text.substr(begin, end - begin)) + "\n";
    begin = end + 1;
  }
  return out + ".fi\n";
}

std::string shell_single_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::string roff_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string man_page_main(const CLI::App& app, std::string_view version, std::string_view date) {
  std::string out = title("sparkdoc", version, date);
  out +=
      ".SH NAME\nsparkdoc \\- a doctor for ML training on NVIDIA DGX Spark and other NVIDIA "
      "Linux machines\n";
  out +=
      ".SH SYNOPSIS\n.B sparkdoc\n[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]\n.br\n.B sparkdoc help\n"
      "[\\fICOMMAND\\fR]\n.br\n.B sparkdoc \\-\\-version\n";
  out += ".SH DESCRIPTION\n" + paragraphs(app.get_description());
  out += ".SH COMMANDS\n";
  for (const CLI::App* command : commands_of(app)) {
    out += ".TP\n.B " + roff_escape(command->get_name()) + "\n" +
           roff_escape(summary_of(command->get_name())) + " (\\fBsparkdoc\\-" +
           roff_escape(command->get_name()) + "\\fR(1))\n";
  }
  out +=
      ".SH EXIT STATUS\n.TP\n.B 0\nready: nothing blocks the job (warnings may remain)\n"
      ".TP\n.B 1\nblocked: a check failed, or the command found what it looks for\n"
      ".TP\n.B 2\na usage error, unreadable input or an internal error\n";
  out +=
      ".SH FILES\n.TP\n.I ~/.cache/sparkdoc/\nthe Hub header cache of \\fBsparkdoc plan\\fR\n"
      ".TP\n.I /var/lib/sparkdoc/\njournals of the tunables \\fBsparkdoc clean\\fR and "
      "\\fBsparkdoc run\\fR change, for \\fBclean \\-\\-restore\\fR\n"
      ".TP\n.I /usr/share/doc/sparkdoc/\nthe check catalogue (CHECKS.md), lint rules "
      "(LINT.md) and the README\n";
  out += ".SH SEE ALSO\n";
  std::string see;
  for (const CLI::App* command : commands_of(app)) {
    see += (see.empty() ? "" : ",\n") + std::string("\\fBsparkdoc\\-") +
           roff_escape(command->get_name()) + "\\fR(1)";
  }
  return out + see + "\n";
}

std::string man_page_command(const CLI::App& command, std::string_view summary,
                             std::string_view version, std::string_view date) {
  const std::string name = command.get_name();
  std::string out = title("sparkdoc-" + name, version, date);
  out += ".SH NAME\nsparkdoc\\-" + roff_escape(name) + " \\- " + roff_escape(summary) + "\n";
  out += ".SH SYNOPSIS\n.B sparkdoc " + roff_escape(name) + "\n[\\fIOPTIONS\\fR]";
  for (const CLI::Option* positional : positionals_of(command)) {
    out += " \\fI" + roff_escape(positional->get_name()) + "\\fR";
    if (positional->get_expected_max() > 1) out += "...";
  }
  out += "\n.SH DESCRIPTION\n" + paragraphs(command.get_description());
  out += ".SH OPTIONS\n";
  for (const CLI::Option* option : options_of(command)) {
    std::string names;
    for (const std::string& spelling : spellings(*option)) {
      names += (names.empty() ? "" : ", ") + std::string("\\fB") + roff_escape(spelling) + "\\fR";
    }
    if (takes_value(*option)) names += " \\fI" + roff_escape(value_name(*option)) + "\\fR";
    out += ".TP\n" + names + "\n" + roff_escape(option->get_description()) + "\n";
    if (!option->get_default_str().empty()) {
      out += "(default: " + roff_escape(option->get_default_str()) + ")\n";
    }
  }
  for (const CLI::Option* positional : positionals_of(command)) {
    out += ".TP\n\\fI" + roff_escape(positional->get_name()) + "\\fR\n" +
           roff_escape(positional->get_description()) + "\n";
  }
  const std::string footer = command.get_footer();
  if (footer.find_first_not_of(" \n") != std::string::npos) {
    out += ".SH NOTES\n" + literal_block(footer);
  }
  out += ".SH SEE ALSO\n\\fBsparkdoc\\fR(1), \\fBsparkdoc help " + roff_escape(name) + "\\fR\n";
  return out;
}

std::string bash_completion(const CLI::App& app) {
  std::string names;
  for (const CLI::App* command : commands_of(app)) names += " " + command->get_name();
  std::string out =
      "# bash completion for sparkdoc, written from its command line (sparkdoc_docs).\n"
      "_sparkdoc() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      "  local commands=\"" +
      names.substr(1) +
      "\"\n"
      "  local command=\"\" i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${COMP_WORDS[i]}\" in\n"
      "      -*) ;;\n"
      "      *) command=\"${COMP_WORDS[i]}\"; break ;;\n"
      "    esac\n"
      "  done\n"
      "  case \"$command\" in\n"
      "    \"\") COMPREPLY=($(compgen -W \"$commands help --help --version\" -- \"$cur\")); "
      "return ;;\n"
      "    help) COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\")); return ;;\n";
  for (const CLI::App* command : commands_of(app)) {
    std::string all, files, folders, values;
    for (const CLI::Option* option : options_of(*command)) {
      for (const std::string& spelling : spellings(*option)) {
        all += " " + spelling;
        switch (value_kind(*option)) {
          case ValueKind::kFile:
            files += "|" + spelling;
            break;
          case ValueKind::kDirectory:
            folders += "|" + spelling;
            break;
          case ValueKind::kNone:
            if (takes_value(*option)) values += "|" + spelling;
            break;
        }
      }
    }
    out += "    " + command->get_name() + ")\n      case \"$prev\" in\n";
    if (!files.empty()) {
      out += "        " + files.substr(1) +
             ") COMPREPLY=($(compgen -f -- \"$cur\")); compopt -o filenames 2>/dev/null; "
             "return 0 ;;\n";
    }
    if (!folders.empty()) {
      out += "        " + folders.substr(1) +
             ") COMPREPLY=($(compgen -d -- \"$cur\")); compopt -o filenames 2>/dev/null; "
             "return 0 ;;\n";
    }
    if (!values.empty()) out += "        " + values.substr(1) + ") COMPREPLY=(); return ;;\n";
    out += "      esac\n";
    // Words that are not options: file names for a PATH, FILE, LOG or MODEL, commands for
    // `run -- CMD`, nothing for free text (explain's words).
    for (const CLI::Option* positional : positionals_of(*command)) {
      const std::string type = positional->get_type_name();
      std::string words;
      if (type.rfind("CMD", 0) == 0) {
        words = "compgen -c -- \"$cur\"";
      } else if (type.find("PATH") != std::string::npos || type.find("FILE") != std::string::npos ||
                 type.find("LOG") != std::string::npos || type.find("MODEL") != std::string::npos) {
        words = "compgen -f -- \"$cur\"";
      }
      if (words.empty()) continue;
      out += "      if [[ \"$cur\" != -* ]]; then COMPREPLY=($(" + words +
             ")); compopt -o filenames 2>/dev/null; return 0; fi\n";
      break;
    }
    out += "      COMPREPLY=($(compgen -W \"" + all.substr(1) + "\" -- \"$cur\")) ;;\n";
  }
  out += "  esac\n}\ncomplete -F _sparkdoc sparkdoc\n";
  return out;
}

std::string zsh_completion(const CLI::App& app) {
  std::string out =
      "#compdef sparkdoc\n"
      "# zsh completion for sparkdoc, written from its command line (sparkdoc_docs).\n"
      "_sparkdoc() {\n"
      "  local -a commands\n"
      "  commands=(\n";
  for (const CLI::App* command : commands_of(app)) {
    out += "    " +
           shell_single_quoted(command->get_name() + ":" +
                               std::string(summary_of(command->get_name()))) +
           "\n";
  }
  out +=
      "  )\n"
      "  if (( CURRENT == 2 )); then\n"
      "    _describe -t commands 'sparkdoc command' commands\n"
      "    return\n"
      "  fi\n"
      "  local command=${words[2]}\n"
      "  shift words\n"
      "  (( CURRENT-- ))\n"
      "  case $command in\n";
  for (const CLI::App* command : commands_of(app)) {
    out += "    " + command->get_name() + ")\n      _arguments -s";
    for (const CLI::Option* option : options_of(*command)) {
      std::string help = first_sentence(option->get_description(), 70);
      std::string escaped;
      for (char c : help) {
        if (c == '[' || c == ']' || c == ':' || c == '\\') escaped += '\\';
        escaped += c;
      }
      std::string action;
      if (takes_value(*option)) {
        const std::string type = option->get_type_name();
        // The message zsh shows for the value: the type's first word, without CLI11's
        // validator text after a colon ("R:UINT in [1 - 65536]" is R).
        const std::string what = type.substr(0, type.find_first_of(":= "));
        switch (value_kind(*option)) {
          case ValueKind::kFile:
            action = ":" + what + ":_files";
            break;
          case ValueKind::kDirectory:
            action = ":" + what + ":_files -/";
            break;
          case ValueKind::kNone: {
            // A set of choices ("WHEN:{auto,always,never}") completes as those words.
            const size_t open = type.find('{'), close = type.rfind('}');
            std::string choices;
            if (open != std::string::npos && close != std::string::npos && close > open) {
              choices = type.substr(open + 1, close - open - 1);
              std::replace(choices.begin(), choices.end(), ',', ' ');
            }
            action = ":" + what + ":" + (choices.empty() ? " " : "(" + choices + ")");
            break;
          }
        }
      }
      const std::vector<std::string> names = spellings(*option);
      std::string exclusive = "(";
      for (const std::string& n : names) exclusive += (exclusive.size() > 1 ? " " : "") + n;
      exclusive += ")";
      for (const std::string& n : names) {
        out += " \\\n        " + shell_single_quoted((names.size() > 1 ? exclusive : "") + n + "[" +
                                                     escaped + "]" + action);
      }
    }
    if (!positionals_of(*command).empty()) out += " \\\n        '*:file:_files'";
    out += " ;;\n";
  }
  out += "  esac\n}\n_sparkdoc \"$@\"\n";
  return out;
}

}  // namespace sparkdoc::cli
