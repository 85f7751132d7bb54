// The man pages of cli/docs.h: sparkdoc(1) and sparkdoc-NAME(1), in roff, from the app.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <string_view>

#include "cli/docs.h"
#include "cli/docs_app.h"

namespace sparkdoc::cli {
namespace {

using namespace docs;  // the app as docs_app.h reads it

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

}  // namespace sparkdoc::cli
