// The shell completions of cli/docs.h: bash (complete -F) and zsh (#compdef), from the app.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <string_view>

#include "cli/docs.h"
#include "cli/docs_app.h"

namespace sparkdoc::cli {
namespace {

using namespace docs;  // the app as docs_app.h reads it

// The first sentence of a description, at most `limit` characters, for completion menus.
std::string first_sentence(std::string_view text, size_t limit) {
  std::string out(text.substr(0, text.find('\n')));
  if (auto stop = out.find(". "); stop != std::string::npos) out.resize(stop);
  if (out.size() > limit) out = out.substr(0, limit - 3) + "...";
  return out;
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
