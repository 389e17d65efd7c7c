#include "cli/commands.hpp"
#include "util/text.hpp"

#include <memory>
#include <sstream>
#include <vector>

namespace lume_unlock::cli {

namespace {

/// One command of the tree: its path below the root ("" for the root, "allow add"), the words
/// that may follow it, the options it accepts and those of them that take a value.
struct CommandTable {
  std::string path;
  std::vector<std::string> subcommands;
  std::vector<std::string> options;
  std::vector<std::string> value_options;
};

bool visible(const CLI::App* app) {
  return !app->get_group().empty();
}

void collect(const CLI::App& app, const std::string& path, std::vector<CommandTable>& tables) {
  CommandTable table{path, {}, {}, {}};
  for (const CLI::Option* option : app.get_options()) {
    if (!option->nonpositional() || option->get_group().empty()) {
      continue;
    }
    std::vector<std::string> names;
    for (const auto& name : option->get_snames()) {
      names.push_back("-" + name);
    }
    for (const auto& name : option->get_lnames()) {
      names.push_back("--" + name);
    }
    table.options.insert(table.options.end(), names.begin(), names.end());
    if (option->get_expected_min() > 0) { // flags expect no value
      table.value_options.insert(table.value_options.end(), names.begin(), names.end());
    }
  }
  std::vector<const CLI::App*> children = app.get_subcommands(visible);
  for (const CLI::App* child : children) {
    table.subcommands.push_back(child->get_name());
  }
  tables.push_back(table);
  for (const CLI::App* child : children) {
    collect(*child, path.empty() ? child->get_name() : path + " " + child->get_name(), tables);
  }
}

/// A shell function `name PATH` that echoes one field of PATH's table: the same text in bash and
/// zsh. Command and option names are plain words ([a-z-]), so nothing needs quoting.
void write_lookup(std::ostream& out,
                  const std::string& name,
                  const std::vector<CommandTable>& tables,
                  std::vector<std::string> CommandTable::*field) {
  out << name << "() {\n  case \"$1\" in\n";
  for (const auto& table : tables) {
    if (!(table.*field).empty()) {
      out << "    \"" << table.path << "\") echo \"" << util::join(table.*field, " ") << "\" ;;\n";
    }
  }
  out << "  esac\n}\n";
}

// The main function of each shell is its head, this walk, then its tail.
// Both shells walk the words before the cursor the same way: skip options and the values of
// options that take one, and descend into a word that names a subcommand of the current path.
const char* const k_walk_body = R"sh(    case "$w" in -*) continue ;; esac
    case " $(_lume_unlock_value_options "$cmd") $(_lume_unlock_value_options "") " in
      *" $prev "*) continue ;;
    esac
    case " $(_lume_unlock_subcommands "$cmd") " in
      *" $w "*) cmd="${cmd:+$cmd }$w" ;;
    esac
)sh";

const char* const k_bash_head = R"sh(_lume_unlock() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    prev="${COMP_WORDS[i-1]}"
)sh";
const char* const k_bash_tail = R"sh(  done
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  case " $(_lume_unlock_value_options "$cmd") $(_lume_unlock_value_options "") " in
    *" $prev "*) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  local words
  case "$cur" in
    -*) words="$(_lume_unlock_options "$cmd") $(_lume_unlock_options "")" ;;
    *) words="$(_lume_unlock_subcommands "$cmd")" ;;
  esac
  if [ -z "$words" ]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}
complete -F _lume_unlock lume-unlock
)sh";

const char* const k_zsh_head = R"sh(_lume_unlock() {
  local cmd="" w prev i words_here
  for ((i = 2; i < CURRENT; i++)); do
    w="${words[i]}"
    prev="${words[i-1]}"
)sh";
const char* const k_zsh_tail = R"sh(  done
  case " $(_lume_unlock_value_options "$cmd") $(_lume_unlock_value_options "") " in
    *" ${words[CURRENT-1]} "*) _files; return ;;
  esac
  case "${words[CURRENT]}" in
    -*) words_here="$(_lume_unlock_options "$cmd") $(_lume_unlock_options "")" ;;
    *) words_here="$(_lume_unlock_subcommands "$cmd")" ;;
  esac
  if [[ -z "${words_here// /}" ]]; then
    _files
  else
    compadd -- ${=words_here}
  fi
}
)sh";

/// The script for `shell` ("bash" or "zsh") from `root`'s command and option tables: each
/// command's subcommands and options, and which options take a value (a file name). Hidden
/// commands and options are left out.
std::string completion_script(const CLI::App& root, const std::string& shell) {
  if (shell != "bash" && shell != "zsh") {
    throw Error(ErrorCategory::usage,
                "no completion for shell '" + shell + "'",
                "",
                "run 'lume-unlock completions bash' or 'lume-unlock completions zsh'");
  }
  std::vector<CommandTable> tables;
  collect(root, "", tables);
  std::ostringstream out;
  out << (shell == "zsh" ? "#compdef lume-unlock\n" : "") << "# " << shell
      << " completion for lume-unlock, generated by 'lume-unlock completions " << shell
      << "' from its command and option tables.\n";
  write_lookup(out, "_lume_unlock_subcommands", tables, &CommandTable::subcommands);
  write_lookup(out, "_lume_unlock_options", tables, &CommandTable::options);
  write_lookup(out, "_lume_unlock_value_options", tables, &CommandTable::value_options);
  const bool bash = shell == "bash";
  out << (bash ? k_bash_head : k_zsh_head) << k_walk_body << (bash ? k_bash_tail : k_zsh_tail);
  if (shell == "zsh") {
    out << "_lume_unlock \"$@\"\n";
  }
  return out.str();
}

} // namespace

void register_completions(CLI::App& app, Context& context) {
  auto shell = std::make_shared<std::string>();
  auto* command = app.add_subcommand("completions", "Print the bash or zsh completion script");
  command->group(""); // hidden: packaging runs it, users get the installed files
  command->add_option("shell", *shell, "bash or zsh")->required();
  command->callback([shell, command, &context] {
    context.out << completion_script(*command->get_parent(), *shell);
  });
}

} // namespace lume_unlock::cli
