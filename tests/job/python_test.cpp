// The Python reader on the forms training scripts use: the seeds' own loading, LoRA and trainer
// code, every string form, continuation lines, imports with aliases, and text that is not
// Python at all.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/fs.h"
#include "job/python_source.h"
#include "job/python_tokens.h"

namespace sparkdoc::job {
namespace {

using ::testing::ElementsAre;
using K = PyValue::Kind;

std::vector<std::string> kinds_and_text(std::string_view src) {
  std::vector<std::string> out;
  for (const Token& t : tokenize_python(src)) {
    std::string k = t.kind == TokenKind::kName      ? "N"
                    : t.kind == TokenKind::kNumber  ? "#"
                    : t.kind == TokenKind::kString  ? "S"
                    : t.kind == TokenKind::kOp      ? "O"
                    : t.kind == TokenKind::kNewline ? "NL"
                    : t.kind == TokenKind::kComment ? "C"
                                                    : "E";
    out.push_back(k == "NL" ? k : k + ":" + std::string(t.text));
  }
  return out;
}

const PyCall* find_call(const PySource& s, std::string_view callee) {
  for (const PyCall& c : s.calls) {
    if (c.callee == callee) return &c;
  }
  return nullptr;
}

TEST(PythonTokens, NamesNumbersOperatorsAndLogicalLines) {
  EXPECT_THAT(
      kinds_and_text("x = 2_000 ** -1e-3  # note\ny"),
      ElementsAre("N:x", "O:=", "#:2_000", "O:**", "O:-", "#:1e-3", "C:# note", "NL", "N:y", "NL"));
  // Brackets and a backslash join lines; a blank or comment-only line ends nothing.
  EXPECT_THAT(kinds_and_text("f(a,\n  b)\\\n + 1\n\n# c\n"),
              ElementsAre("N:f", "O:(", "N:a", "O:,", "N:b", "O:)", "O:+", "#:1", "NL", "C:# c"));
}

TEST(PythonTokens, EveryStringForm) {
  auto tokens = tokenize_python(
      "a = 'x\\n' \"y\" r'\\d' b'z' Rb'w' u'v' '''tri\n'ple''' \"\"\"q\"\"\" f'{x!r:>{w}}' "
      "f\"{d[\"k\"]}\"\n");
  std::vector<std::string> values;
  std::vector<bool> fstrings;
  for (const Token& t : tokens) {
    if (t.kind != TokenKind::kString) continue;
    values.push_back(t.value);
    fstrings.push_back(t.fstring);
    EXPECT_FALSE(t.unterminated) << t.text;
  }
  EXPECT_THAT(values, ElementsAre("x\n", "y", "\\d", "z", "w", "v", "tri\n'ple", "q", "{x!r:>{w}}",
                                  "{d[\"k\"]}"));
  EXPECT_THAT(fstrings,
              ElementsAre(false, false, false, false, false, false, false, false, true, true));
  // The triple-quoted string spans a line: what follows it is on line 2.
  EXPECT_EQ(tokens.back().line, 2u);
}

TEST(PythonTokens, AnythingIsAccepted) {
  for (std::string_view junk :
       {std::string_view("'unterminated"), std::string_view("\"\"\"open"), std::string_view("f'{'"),
        std::string_view("\x01\xff$?`"), std::string_view("((((((((("), std::string_view("\\")}) {
    auto tokens = tokenize_python(junk);
    EXPECT_FALSE(tokens.empty()) << junk;
  }
  auto open = tokenize_python("x = 'open\ny = 2\n");
  ASSERT_GE(open.size(), 3u);
  EXPECT_TRUE(open[2].unterminated);
  EXPECT_EQ(open.back().line, 2u) << "a single-quoted string ends at its line";
}

// 000 §3, as the recipe writes it.
constexpr std::string_view kNemotronLoad = R"py(
from transformers import AutoModelForCausalLM, AutoTokenizer
import torch

tokenizer = AutoTokenizer.from_pretrained("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
if tokenizer.pad_token is None:
    tokenizer.pad_token = tokenizer.eos_token

model = AutoModelForCausalLM.from_pretrained(
    "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
    dtype=torch.bfloat16,       # NOT torch_dtype= (deprecated in transformers 5.5.3)
    device_map={"": 0},         # single GPU, explicit device assignment
    low_cpu_mem_usage=True,     # REQUIRED - see note below
)
)py";

TEST(PythonSource, ReadsTheSeedsLoadingCall) {
  PySource s = parse_python_source(kNemotronLoad);
  const PyCall* load = find_call(s, "transformers.AutoModelForCausalLM.from_pretrained");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->line, 9u);
  ASSERT_NE(load->positional(0), nullptr);
  EXPECT_EQ(load->positional(0)->string(), "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
  ASSERT_NE(load->keyword("dtype"), nullptr);
  EXPECT_EQ(load->keyword("dtype")->kind, K::kName);
  EXPECT_EQ(load->keyword("dtype")->text, "torch.bfloat16");
  EXPECT_TRUE(load->keyword("low_cpu_mem_usage")->is_true());
  const PyValue* map = load->keyword("device_map");
  ASSERT_NE(map, nullptr);
  ASSERT_EQ(map->kind, K::kDict);
  ASSERT_NE(map->entry(""), nullptr);
  EXPECT_EQ(map->entry("")->integer, 0);
  EXPECT_EQ(load->keyword("torch_dtype"), nullptr);
  EXPECT_EQ(load->method(), "from_pretrained");

  ASSERT_EQ(s.assignments.size(), 3u);
  EXPECT_EQ(s.assignments[1].target, "tokenizer.pad_token");
  EXPECT_EQ(s.assignments[1].value.text, "tokenizer.eos_token");
  EXPECT_EQ(s.assignments[1].line, 7u);
  EXPECT_TRUE(s.imports_from("transformers"));
}

// 001's LoRA and trainer configuration, through an alias and a config object.
constexpr std::string_view kQwenTraining = R"py(
from unsloth import FastModel as FM
from trl import SFTConfig, SFTTrainer
model, tokenizer = FM.from_pretrained(model_name=model_id, dtype=torch.bfloat16,
                                      load_in_4bit=False)
model = FM.get_peft_model(
    model, r=16, lora_alpha=16, lora_dropout=0.0,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj",
                    "gate_proj", "up_proj", "down_proj"],
    bias="none", use_gradient_checkpointing="unsloth",
)
training_args = SFTConfig(
    per_device_train_batch_size=2, gradient_accumulation_steps=4, num_train_epochs=3,
    learning_rate=2e-4, warmup_steps=5, optim="adamw_8bit", max_seq_length=2048,
    packing=False, dataset_num_proc=1,
)
trainer = SFTTrainer(model=model, args=training_args, **extra)
)py";

TEST(PythonSource, ResolvesAliasesAndConfigObjects) {
  PySource s = parse_python_source(kQwenTraining);
  const PyCall* peft = find_call(s, "unsloth.FastModel.get_peft_model");
  ASSERT_NE(peft, nullptr);
  EXPECT_EQ(peft->written, "FM.get_peft_model");
  EXPECT_EQ(peft->keyword("r")->integer, 16);
  EXPECT_EQ(peft->keyword("lora_dropout")->kind, K::kFloat);
  EXPECT_EQ(peft->keyword("lora_dropout")->number, 0.0);
  ASSERT_EQ(peft->keyword("target_modules")->kind, K::kList);
  EXPECT_EQ(peft->keyword("target_modules")->items.size(), 7u);
  EXPECT_EQ(peft->keyword("target_modules")->items[6].string(), "down_proj");
  EXPECT_EQ(peft->keyword("use_gradient_checkpointing")->string(), "unsloth");

  const PyCall* trainer = find_call(s, "trl.SFTTrainer");
  ASSERT_NE(trainer, nullptr);
  EXPECT_TRUE(trainer->unpacks_kwargs);
  const PyValue* args = trainer->keyword("args");
  ASSERT_NE(args, nullptr);
  ASSERT_EQ(args->kind, K::kName);
  const PyValue* config = s.value_of(args->text, trainer->line);
  ASSERT_NE(config, nullptr);
  ASSERT_EQ(config->kind, K::kCall);
  EXPECT_EQ(config->call->callee, "trl.SFTConfig");
  EXPECT_EQ(config->call->keyword("learning_rate")->number, 2e-4);
  EXPECT_EQ(config->call->keyword("max_seq_length")->integer, 2048);
  EXPECT_TRUE(config->call->keyword("packing")->is_false());
}

TEST(PythonSource, CallsInsideFunctionsChainsAndComprehensions) {
  PySource s = parse_python_source(R"py(
import os, torch.utils.checkpoint as ckpt
def main(path=default_path()):
    for name in sorted(os.listdir(path)):
        print([load(x) for x in names])
    model = AutoModel.from_pretrained(path).to("cuda")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    return ckpt.checkpoint(fn, use_reentrant=False)
@dataclass(frozen=True)
class C(Base, metaclass=Meta):
    x: int = field(default=3)
)py");
  std::vector<std::string> callees;
  for (const PyCall& c : s.calls) callees.push_back(c.callee);
  EXPECT_THAT(callees, ElementsAre("sorted", "os.listdir", "print", "load",
                                   "AutoModel.from_pretrained", "AutoModel.from_pretrained().to",
                                   "torch.utils.checkpoint.checkpoint", "dataclass", "field"));
  EXPECT_TRUE(
      find_call(s, "torch.utils.checkpoint.checkpoint")->keyword("use_reentrant")->is_false());
  bool env = false;
  for (const auto& a : s.assignments) {
    env = env ||
          (a.target == "os.environ[\"TOKENIZERS_PARALLELISM\"]" && a.value.string() == "false");
  }
  EXPECT_TRUE(env);
  // `x: int = field(...)`: the target is the name before the annotation.
  EXPECT_EQ(s.assignments.back().target, "x");
}

TEST(PythonSource, IgnoreCommentsAndLiterals) {
  PySource s = parse_python_source(
      "f(a=None, b=-3, c=0x1F, d=(1, 2), e=(1), g='a' 'b', h=f'{x}', i=lambda q: q, j=1 + 2)  "
      "# sparkdoc: ignore L3, L12\n");
  const PyCall* f = find_call(s, "f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->keyword("a")->kind, K::kNone);
  EXPECT_EQ(f->keyword("b")->integer, -3);
  EXPECT_EQ(f->keyword("c")->integer, 31);
  EXPECT_EQ(f->keyword("d")->kind, K::kTuple);
  EXPECT_EQ(f->keyword("e")->kind, K::kInt) << "(1) is 1, not a tuple";
  EXPECT_EQ(f->keyword("g")->string(), "ab");
  EXPECT_FALSE(f->keyword("h")->string()) << "an f-string is not a constant";
  EXPECT_EQ(f->keyword("i")->kind, K::kOther);
  EXPECT_EQ(f->keyword("j")->kind, K::kOther);
  EXPECT_EQ(f->keyword("j")->text, "1 + 2");
  EXPECT_THAT(s.ignored[1], ElementsAre("L3", "L12"));
}

TEST(PythonSource, DeepNestingIsCutNotFollowed) {
  std::string deep(10000, '(');
  deep += "x";
  deep += std::string(10000, ')');
  PySource s = parse_python_source("y = f" + deep + "\nz = g(1)\n");
  EXPECT_TRUE(s.truncated);
  EXPECT_NE(find_call(s, "g"), nullptr) << "the next line is read";
}

// 597 bytes a fuzz campaign grew (tests/fixtures/job/rereading-brackets.py): brackets that make
// nested comprehensions read one another again and again took 4 s under ASan. The reader stops
// after 32 expressions per token and says so; a plain call after it on its own line still reads.
TEST(PythonSource, TextThatMakesTheReaderGoOverItAgainIsCut) {
  auto text = read_text(std::string(SPARKDOC_FIXTURES) + "/job/rereading-brackets.py");
  ASSERT_TRUE(text) << text.error().message;
  const auto started = std::chrono::steady_clock::now();
  PySource s = parse_python_source(*text);
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(s.truncated);
  EXPECT_LT(took, std::chrono::milliseconds(500));  // 4 s before; about 1 ms now
  // Ordinary code never comes near the limit.
  std::string recipe = "from unsloth import FastModel\n";
  for (int k = 0; k < 200; ++k) {
    recipe += "m" + std::to_string(k) +
              " = FastModel.from_pretrained('x', load_in_4bit=[i for i "
              "in range(3) if {a: b for a, b in d.items()}], **{'k': f(g(h(1)))})\n";
  }
  PySource ok = parse_python_source(recipe);
  EXPECT_FALSE(ok.truncated);
  EXPECT_EQ(ok.calls.size(), 200u * 6);
}

}  // namespace
}  // namespace sparkdoc::job
