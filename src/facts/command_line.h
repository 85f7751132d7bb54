// Reading a planned command line (--cmd) without running it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparkdoc::facts {

// Splits a command line into words at spaces, tabs, quotes, commas and parentheses, so that
// `python -c "LLM(tensor_parallel_size=2)"` yields "tensor_parallel_size=2".
std::vector<std::string> command_words(std::string_view command);
// The value of an option in a command line: "--flag V" or "--flag=V". Flags are compared with
// '_' and '-' treated alike.
std::optional<std::string> option_value(std::string_view command,
                                        const std::vector<std::string_view>& flags);

// Whether a config key or command option sets the tensor-parallel degree (G10 and lint's L43):
// tensor-parallel-size, tp, tp-size, tensor-model-parallel-size, tensor-parallel-degree, with
// '-' and '_' alike, leading dashes and any dotted prefix ("trainer.tp_size") ignored.
bool is_tensor_parallel_key(std::string key);

}  // namespace sparkdoc::facts
