// The rules of the model view and of PEFT's target rewriting that differ by family, each on a
// small synthetic checkpoint named for the family it comes from. The numbers are those PEFT 0.21
// gives on transformers 5.17 for the same layout (bench/plan_sweep.py measured every
// architecture; bench/plan_sweep_compare.py compares sparkdoc with it).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model_fixtures.h"
#include "plan/plan.h"
#include "plan_helpers.h"

namespace sparkdoc::plan {
namespace {

using sparkdoc::testing::full_plan;
using sparkdoc::testing::lora_plan;
using sparkdoc::testing::lora_refusal;
using sparkdoc::testing::ModelFixture;
using sparkdoc::testing::open_fixture;
using sparkdoc::testing::Opened;
using sparkdoc::testing::WriteTensor;

constexpr uint64_t kH = 16;  // hidden size
constexpr uint64_t kV = 64;  // vocabulary
const std::vector<std::string> kDefault{"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                        "gate_proj", "up_proj", "down_proj"};
const std::vector<std::string> kAllLinear{"all-linear"};

// One decoder layer of attention at H=16 with an untied head, and `extra` tensors. Its own
// parameters: embedding and head 64x16 each, q/k/v/o 16x16, one norm.
ModelFixture tiny(const std::string& model_type, std::vector<WriteTensor> extra,
                  const std::string& config_extra = "") {
  ModelFixture m;
  m.config = R"({"model_type":")" + model_type +
             R"(","hidden_size":16,"num_hidden_layers":1,"num_attention_heads":2,
      "vocab_size":64,"tie_word_embeddings":false)" +
             config_extra + "}";
  m.tensors = {{"model.embed_tokens.weight", "BF16", {kV, kH}},
               {"model.layers.0.self_attn.q_proj.weight", "BF16", {kH, kH}},
               {"model.layers.0.self_attn.k_proj.weight", "BF16", {kH, kH}},
               {"model.layers.0.self_attn.v_proj.weight", "BF16", {kH, kH}},
               {"model.layers.0.self_attn.o_proj.weight", "BF16", {kH, kH}},
               {"model.norm.weight", "BF16", {kH}},
               {"lm_head.weight", "BF16", {kV, kH}}};
  for (auto& t : extra) m.tensors.push_back(std::move(t));
  return m;
}
constexpr uint64_t kTinyParams = 2 * kV * kH + 4 * kH * kH + kH;

Opened open_tiny(const std::string& name, const ModelFixture& m) {
  return open_fixture(name, m, 1);
}

uint64_t dropped_tensors(const Plan& p) {
  uint64_t n = 0;
  for (const auto& d : p.model.dropped) n += d.tensors;
  return n;
}

// Persistent buffers save_pretrained writes beside the parameters, family by family (the sweep's
// `buffers`): Apertus' xIELU beta and eps (alpha_p is a parameter), Gemma 4's layer_scalar,
// MiniMax's lightning-attention decays, BatchNorm running statistics (FastVLM's timm tower),
// DeepSeek-V4's tid2eid, ZAYA's balancing_biases, Phi-4-multimodal's audio normalisation and
// Florence-2's pos_idx_to_embed.
TEST(PlanBuffers, PersistentBuffersOfTransformers5FamiliesAreNotParameters) {
  const std::string l = "model.layers.0.";
  auto o = open_tiny(
      "buffers", tiny("llama", {{l + "mlp.act_fn.alpha_p", "BF16", {1}},
                                {l + "mlp.act_fn.beta", "BF16", {1}},
                                {l + "mlp.act_fn.eps", "BF16", {1}},
                                {l + "layer_scalar", "BF16", {1}},
                                {l + "self_attn.query_decay", "F32", {2, 1, 1}},
                                {l + "self_attn.key_decay", "F32", {2, 4, 1}},
                                {l + "self_attn.diagonal_decay", "F32", {1, 2, 4, 4}},
                                {l + "self_attn.slope_rate", "F32", {2, 1, 1}},
                                {"model.vision.stem.bn.running_mean", "F32", {8}},
                                {"model.vision.stem.bn.running_var", "F32", {8}},
                                {"model.vision.stem.bn.num_batches_tracked", "I64", {}},
                                {l + "mlp.gate.tid2eid", "I64", {kV, 2}},
                                {l + "mlp.gate.balancing_biases", "F32", {4}},
                                {"model.audio.encoder_embedding.global_mean", "F32", {8}},
                                {"model.audio.encoder_embedding.global_invstd", "F32", {8}},
                                {"model.projector.temporal.pos_idx_to_embed", "F32", {10, kH}}}));
  Plan p = full_plan(o);
  EXPECT_EQ(p.total_params, kTinyParams + 1);
  EXPECT_EQ(dropped_tensors(p), 15u);
}

// The routers' score correction is a buffer (DeepSeek-V3, GLM-4.5, ...) except where the family
// keeps it as a parameter: Laguna's router, ERNIE 4.5's moe_statics module. HunYuan V3's
// checkpoints call the buffer expert_bias, a name AFMoE uses for a parameter.
TEST(PlanBuffers, ScoreCorrectionBiasIsAParameterOnlyInLagunaAndErnieMoeStatics) {
  std::vector<WriteTensor> bias{{"model.layers.0.mlp.gate.e_score_correction_bias", "F32", {8}}};
  EXPECT_EQ(full_plan(open_tiny("escore_deepseek", tiny("deepseek_v3", bias))).total_params,
            kTinyParams);
  EXPECT_EQ(full_plan(open_tiny("escore_laguna", tiny("laguna", bias))).total_params,
            kTinyParams + 8);
  std::vector<WriteTensor> statics{
      {"model.layers.0.mlp.gate.moe_statics.e_score_correction_bias", "F32", {1, 8}}};
  EXPECT_EQ(full_plan(open_tiny("escore_ernie", tiny("ernie4_5_moe", statics))).total_params,
            kTinyParams + 8);
  // HunYuan V3's original layout (its router as router.gate) is converted at load.
  std::vector<WriteTensor> expert_bias{{"model.layers.0.mlp.router.gate.weight", "BF16", {8, kH}},
                                       {"model.layers.0.mlp.expert_bias", "F32", {8}}};
  EXPECT_EQ(full_plan(open_tiny("expert_bias_hyv3", tiny("hy_v3", expert_bias))).total_params,
            kTinyParams + 8 * kH);
  EXPECT_EQ(full_plan(open_tiny("expert_bias_afmoe", tiny("afmoe", expert_bias))).total_params,
            kTinyParams + 8 * kH + 8);
}

// all-linear takes nn.Linear only. Embeddings by transformers 5's names (GPT-NeoX embed_in,
// OpenAI GPT tokens_embed, Gemma 3n embed_tokens_per_layer, Kosmos-2.5 segment_emb and
// row_embedder, T5 relative_attention_bias, Ovis 2 visual_embeddings_table, RoCBert
// shape_embed) stay out; Cosmos 3's 2-D patch_embedding, ProphetNet's relative_pos_embeddings
// and Gemma 3n's embedding_projection are nn.Linear and go in.
TEST(PlanEmbeddings, EmbeddingNamesOfTransformers5AreLeftOutOfAllLinear) {
  const std::string l = "model.layers.0.";
  auto o =
      open_tiny("embeddings",
                tiny("llama", {{"model.embed_in.weight", "BF16", {kV, kH}},
                               {"model.tokens_embed.weight", "BF16", {kV, kH}},
                               {"model.embed_tokens_per_layer.weight", "BF16", {kV, 4}},
                               {"model.segment_emb.weight", "BF16", {2, kH}},
                               {"model.row_embedder.weight", "BF16", {8, kH}},
                               {l + "self_attn.relative_attention_bias.weight", "BF16", {32, 2}},
                               {"model.visual_embeddings_table.weight", "BF16", {8, kH}},
                               {"model.shape_embed.weight", "BF16", {8, kH}},
                               {"model.patch_embedding.weight", "BF16", {kH, 48}},
                               {l + "relative_pos_embeddings.weight", "BF16", {4, kH}},
                               {"model.embedding_projection.weight", "BF16", {kH, 4}}}));
  Plan p = lora_plan(o, 8, kAllLinear, false);
  EXPECT_EQ(p.lora->modules, 7u);
  EXPECT_EQ(p.trainable, 8 * (4 * 2 * kH + (kH + 48) + (kH + 4) + (4 + kH)));
}

// CTRL's token embedding is transformer.w; elsewhere a module named w is nn.Linear.
TEST(PlanEmbeddings, CtrlsWIsItsTokenEmbedding) {
  std::vector<WriteTensor> w{{"transformer.w.weight", "BF16", {kV, kH}}};
  EXPECT_EQ(lora_plan(open_tiny("w_ctrl", tiny("ctrl", w)), 8, kAllLinear, false).lora->modules,
            4u);
  EXPECT_EQ(lora_plan(open_tiny("w_llama", tiny("llama", w)), 8, kAllLinear, false).lora->modules,
            5u);
}

// The head all-linear leaves out is get_output_embeddings()'s module: RoBERTa-style
// lm_head.decoder (XLM-R and CamemBERT save it and drop the tied word embedding) beside
// lm_head.dense, which is adapted; BERT-style cls.predictions.decoder (RemBERT); RWKV's head.
TEST(PlanHeads, TheOutputEmbeddingsOfEachFamilyAreLeftOutOfAllLinear) {
  struct Case {
    const char* name;
    std::vector<WriteTensor> head;
    uint64_t modules;
  };
  std::vector<Case> cases = {{"roberta",
                              {{"lm_head.dense.weight", "BF16", {kH, kH}},
                               {"lm_head.decoder.weight", "BF16", {kV, kH}},
                               {"lm_head.bias", "BF16", {kV}}},
                              5},
                             {"rembert",
                              {{"cls.predictions.transform.dense.weight", "BF16", {kH, kH}},
                               {"cls.predictions.decoder.weight", "BF16", {kV, kH}}},
                              5},
                             {"rwkv", {{"head.weight", "BF16", {kV, kH}}}, 4}};
  for (const auto& c : cases) {
    ModelFixture m = tiny("llama", c.head);
    m.tensors.erase(m.tensors.begin() + 6);  // no lm_head.weight
    Plan p = lora_plan(open_tiny(std::string("head_") + c.name, m), 8, kAllLinear, false);
    EXPECT_EQ(p.lora->modules, c.modules) << c.name;
    EXPECT_EQ(
        p.total_params, kTinyParams - kV * kH +
                            [&] {
                              uint64_t n = 0;
                              for (const auto& t : c.head) {
                                uint64_t e = 1;
                                for (auto d : t.shape) e *= d;
                                n += e;
                              }
                              return n;
                            }())
        << c.name;
  }
}

// BLT has its own lm_head at the top and one inside its patcher: only the top one is the output
// embedding. PI0's only head is inside a wrapper (paligemma_with_expert.gemma_expert.lm_head).
TEST(PlanHeads, ANestedLmHeadIsAdaptedUnlessNoHeadIsAtTheTop) {
  std::vector<WriteTensor> patcher{{"model.patcher.lm_head.weight", "BF16", {kV, 8}}};
  Plan blt = lora_plan(open_tiny("head_blt", tiny("blt", patcher)), 8, kAllLinear, false);
  EXPECT_EQ(blt.lora->modules, 5u);
  EXPECT_EQ(blt.trainable, 8 * (4 * 2 * kH + kV + 8));
  ModelFixture pi0 = tiny("pi0", {{"wrapper.expert.lm_head.weight", "BF16", {kV, kH}}});
  pi0.tensors.erase(pi0.tensors.begin() + 6);
  EXPECT_EQ(lora_plan(open_tiny("head_pi0", pi0), 8, kAllLinear, false).lora->modules, 4u);
}

// A head tied to the word embedding has no weight in the checkpoint. Its place is told by the
// bias kept for it: XLNet's lm_loss is the output embedding (left out of all-linear); BLIP's
// text_decoder.cls.predictions.decoder is not (BLIP's get_output_embeddings() is None), so
// all-linear adapts it, as PEFT does.
TEST(PlanHeads, ATiedHeadSitsBesideItsBias) {
  ModelFixture xlnet = tiny("xlnet", {{"lm_loss.bias", "BF16", {kV}}});
  xlnet.config = R"({"model_type":"xlnet","hidden_size":16,"vocab_size":64})";
  xlnet.tensors.erase(xlnet.tensors.begin() + 6);
  Opened x = open_tiny("tied_xlnet", xlnet);
  Plan xp = lora_plan(x, 8, kAllLinear, false);
  EXPECT_TRUE(xp.model.tied);
  EXPECT_EQ(xp.model.output_embeddings, "lm_loss");
  EXPECT_EQ(xp.lora->modules, 4u);
  EXPECT_EQ(lora_plan(x, 8, {"lm_loss"}, false).trainable, 8 * (kV + kH));

  ModelFixture blip;
  blip.config = R"({"model_type":"blip","tie_word_embeddings":true,"text_config":{
      "model_type":"blip_text_model","hidden_size":16,"vocab_size":64}})";
  const std::string d = "text_decoder.";
  blip.tensors = {{d + "bert.embeddings.word_embeddings.weight", "BF16", {kV, kH}},
                  {d + "bert.encoder.layer.0.attention.self.query.weight", "BF16", {kH, kH}},
                  {d + "cls.predictions.bias", "BF16", {kV}},
                  {d + "cls.predictions.transform.dense.weight", "BF16", {kH, kH}}};
  Plan bp = lora_plan(open_tiny("tied_blip", blip), 8, kAllLinear, false);
  EXPECT_EQ(bp.model.output_head, d + "cls.predictions.decoder");
  EXPECT_EQ(bp.model.output_embeddings, "");
  EXPECT_EQ(bp.lora->modules, 3u);
  EXPECT_EQ(bp.trainable, 8 * (2 * 2 * kH + kV + kH));
  EXPECT_EQ(bp.total_params, kV * kH + 2 * kH * kH + kV);
}

// BigBirdPegasusForCausalLM and CpmAntForCausalLM declare no tied weights: config.json's
// tie_word_embeddings=true notwithstanding, the head in the checkpoint is a parameter.
TEST(PlanTies, BigBirdPegasusAndCpmAntCountTheirHeadWhateverTheConfigSays) {
  for (const char* type : {"bigbird_pegasus", "cpmant"}) {
    ModelFixture m = tiny(type, {});
    m.config = R"({"model_type":")" + std::string(type) +
               R"(","hidden_size":16,"vocab_size":64,"tie_word_embeddings":true})";
    Plan p = full_plan(open_tiny(std::string("ties_") + type, m));
    EXPECT_FALSE(p.model.tied) << type;
    EXPECT_EQ(p.total_params, kTinyParams) << type;
  }
  ModelFixture llama = tiny("llama", {});
  llama.config = R"({"model_type":"llama","hidden_size":16,"vocab_size":64,
      "tie_word_embeddings":true})";
  EXPECT_EQ(full_plan(open_tiny("ties_llama", llama)).total_params, kTinyParams - kV * kH);
}

// A router beside the experts named router is nn.Linear in Llama 4, Jamba, Aria and PhiMoE
// (all-linear adapts it) and a TopKRouter of raw parameters in gpt-oss and the Granite MoE
// family (all-linear leaves it, naming it is an error).
TEST(PlanRouters, RoutersNamedRouterAreLinearExceptInGptOssAndGraniteMoe) {
  const std::string mlp = "model.layers.0.mlp.";
  std::vector<WriteTensor> moe{{mlp + "router.weight", "BF16", {4, kH}},
                               {mlp + "experts.gate_up_proj", "BF16", {4, 2 * 8, kH}},
                               {mlp + "experts.down_proj", "BF16", {4, kH, 8}}};
  for (const char* type : {"gpt_oss", "granitemoe", "granitemoeshared"}) {
    Opened o = open_tiny(std::string("router_") + type, tiny(type, moe));
    EXPECT_EQ(lora_plan(o, 8, kAllLinear, false).lora->modules, 4u) << type;
    EXPECT_NE(lora_refusal(o, 8, {"router"}).find("Router"), std::string::npos) << type;
  }
  for (const char* type : {"phimoe", "llama4_text", "jamba", "aria_text"}) {
    Opened o = open_tiny(std::string("router_") + type, tiny(type, moe));
    Plan p = lora_plan(o, 8, kAllLinear, false);
    EXPECT_EQ(p.lora->modules, 5u) << type;
    EXPECT_EQ(p.trainable, 8 * (4 * 2 * kH + kH + 4)) << type;
  }
}

// The routed experts as 3-D weights of grouped-GEMM modules: Aria's experts.fc1/fc2.weight
// [E, in, out] and JetMoE's attention experts (experts.input_linear.weight). target_parameters
// adapts them when nothing in target_modules matches (JetMoE has no q_proj).
TEST(PlanExperts, ThreeDimensionalWeightsOfExpertsModulesAreExperts) {
  const std::string l = "model.layers.0.";
  Opened aria = open_tiny("experts_aria",
                          tiny("aria_text", {{l + "mlp.experts.fc1.weight", "BF16", {4, kH, 2 * 8}},
                                             {l + "mlp.experts.fc2.weight", "BF16", {4, 8, kH}}}));
  Plan a = lora_plan(aria, 32, kDefault, true);
  EXPECT_EQ(a.lora->modules, 6u);
  EXPECT_EQ(a.trainable, 32 * (4 * 2 * kH + 4 * (kH + 16) + 4 * (8 + kH)));
  EXPECT_EQ(lora_plan(aria, 8, kAllLinear, false).lora->modules, 4u);

  ModelFixture jet;
  jet.config = R"({"model_type":"jetmoe","hidden_size":16,"vocab_size":64,
      "tie_word_embeddings":true})";
  jet.tensors = {{"model.embed_tokens.weight", "BF16", {kV, kH}},
                 {l + "self_attention.kv_proj.weight", "BF16", {2 * kH, kH}},
                 {l + "self_attention.experts.input_linear.weight", "BF16", {8, kH, kH}},
                 {l + "self_attention.experts.output_linear.weight", "BF16", {8, kH, kH}},
                 {l + "self_attention.experts.router.layer.weight", "BF16", {8, kH}},
                 {l + "mlp.input_linear.weight", "BF16", {8, 2 * 32, kH}}};
  Opened j = open_tiny("experts_jetmoe", jet);
  EXPECT_NE(lora_refusal(j, 16, kDefault).find("not found in the base model"), std::string::npos);
  Plan jp = lora_plan(j, 32, kDefault, true);
  EXPECT_EQ(jp.lora->modules, 2u);
  EXPECT_EQ(jp.trainable, 2 * 32 * 8 * (kH + kH));
}

// Zamba runs one shared transformer block in each of its hybrid layers (layers_block_type),
// Zamba 2 num_mem_blocks of them in turn (hybrid_layer_ids). The checkpoint holds each block
// under the first layer that runs it; PEFT adapts the tied copies in every hybrid layer.
TEST(PlanShared, ZambaHybridLayersShareTheirBlocksAndPeftAdaptsEachCopy) {
  auto zamba = [](const std::string& type, const std::string& block,
                  const std::string& layers_config, std::vector<int> holders) {
    ModelFixture m;
    m.config = R"({"model_type":")" + type + R"(","hidden_size":16,"vocab_size":64,
        "num_hidden_layers":6,"tie_word_embeddings":true,)" +
               layers_config + "}";
    m.tensors = {{"model.embed_tokens.weight", "BF16", {kV, kH}}};
    for (int i = 0; i < 6; ++i) {
      std::string l = "model.layers." + std::to_string(i) + ".";
      m.tensors.push_back({l + "mamba.in_proj.weight", "BF16", {2 * kH, kH}});
      for (int h : holders) {
        if (h != i) continue;
        for (const char* p : {"self_attn.q_proj", "self_attn.o_proj", "feed_forward.down_proj"}) {
          m.tensors.push_back({l + block + "." + p + ".weight", "BF16", {kH, kH}});
        }
        m.tensors.push_back({l + block + ".input_layernorm.weight", "BF16", {kH}});
      }
    }
    return m;
  };
  Opened z = open_tiny(
      "shared_zamba",
      zamba("zamba", "shared_transf",
            R"("layers_block_type":["mamba","hybrid","mamba","hybrid","mamba","hybrid"])", {1}));
  Plan zp = lora_plan(z, 8, kDefault, false);
  EXPECT_EQ(zp.total_params, kV * kH + 6 * 2 * kH * kH + 3 * kH * kH + kH);
  EXPECT_EQ(zp.lora->modules, 9u);
  EXPECT_EQ(zp.trainable, 9 * 8 * 2 * kH);
  EXPECT_EQ(lora_plan(z, 8, kAllLinear, false).lora->modules, 6u + 9u);

  // Two blocks in turn over four hybrid layers: 0 and 2 run the first, 1 and 4 the second.
  Opened z2 = open_tiny("shared_zamba2",
                        zamba("zamba2", "shared_transformer",
                              R"("hybrid_layer_ids":[0,1,2,4],"num_mem_blocks":2)", {0, 1}));
  Plan z2p = lora_plan(z2, 8, {"q_proj"}, false);
  EXPECT_EQ(z2p.lora->modules, 4u);
  std::vector<std::string> names;
  for (const auto& a : z2p.lora->adapted) names.push_back(a.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"model.layers.0.shared_transformer.self_attn.q_proj",
                                      "model.layers.1.shared_transformer.self_attn.q_proj",
                                      "model.layers.2.shared_transformer.self_attn.q_proj",
                                      "model.layers.4.shared_transformer.self_attn.q_proj"}));
}

// One MoE layer beside the attention: a router, fused experts (E=4, I=8) and a shared expert.
std::vector<WriteTensor> moe_layer(const std::string& router) {
  const std::string mlp = "model.layers.0.mlp.";
  return {{mlp + router + ".weight", "BF16", {4, kH}},
          {mlp + "experts.gate_up_proj", "BF16", {4, 2 * 8, kH}},
          {mlp + "experts.down_proj", "BF16", {4, kH, 8}},
          {mlp + "shared_experts.gate_proj.weight", "BF16", {8, kH}},
          {mlp + "shared_experts.up_proj.weight", "BF16", {8, kH}},
          {mlp + "shared_experts.down_proj.weight", "BF16", {kH, 8}}};
}
constexpr uint64_t kAttention = 4 * 2 * kH;  // q, k, v, o: r * (in + out) each, over r
constexpr uint64_t kSharedExpert = 3 * (kH + 8);
constexpr uint64_t kGateUp = 4 * (2 * 8 + kH);  // experts.gate_up_proj, over r
constexpr uint64_t kDown = 4 * (kH + 8);

// PEFT 0.21 rewrites the targets of these transformers 5.17 families (as it does Qwen3-MoE's):
// gate_proj and up_proj become the experts' gate_up_proj at rank 2r, down_proj theirs, and the
// shared expert named the same is no longer adapted. Cohere2-MoE, Exaone-MoE, GLM-MoE-DSA,
// Mellum and DeepSeek-V3.2 were measured so.
TEST(PlanPeftMoe, Transformers5FamiliesWhoseTargetsPeftRewrites) {
  for (const char* type :
       {"cohere2_moe", "exaone_moe", "glm_moe_dsa", "mellum", "deepseek_v32", "qwen3_moe"}) {
    Plan p = lora_plan(open_tiny(std::string("rewrite_") + type, tiny(type, moe_layer("gate"))), 16,
                       kDefault, false);
    EXPECT_EQ(p.lora->modules, 6u) << type;
    EXPECT_EQ(p.trainable, 16 * kAttention + 32 * kGateUp + 16 * kDown) << type;
  }
}

// Qwen2-MoE is not rewritten on transformers 5.17 (nor Qwen3-VL-MoE): gate_proj, up_proj and
// down_proj adapt the shared expert, and the routed experts only with target_parameters.
TEST(PlanPeftMoe, Qwen2MoeTargetsAreNotRewrittenOnTransformers5_17) {
  Opened o = open_tiny("rewrite_qwen2_moe", tiny("qwen2_moe", moe_layer("gate")));
  Plan p = lora_plan(o, 16, kDefault, false);
  EXPECT_EQ(p.lora->modules, 7u);
  EXPECT_EQ(p.trainable, 16 * (kAttention + kSharedExpert));
  EXPECT_TRUE(p.lora->target_parameters.empty());
  Plan e = lora_plan(o, 32, kDefault, true);
  EXPECT_EQ(e.lora->modules, 9u);
  EXPECT_EQ(e.trainable, 32 * (kAttention + kSharedExpert + kGateUp + kDown));
}

// AFMoE's router is an nn.Linear named router.gate: PEFT's rewritten "gate" target
// ("gate.weight") wraps its weight as a parameter, and its attention's gate_proj (an output
// gate) leaves target_modules with the MLPs' gate_proj.
TEST(PlanPeftMoe, AfmoeRouterGateIsALinearWhoseWeightTheRewrittenGateTargets) {
  std::vector<WriteTensor> t = moe_layer("router.gate");
  t.push_back({"model.layers.0.self_attn.gate_proj.weight", "BF16", {kH, kH}});
  Opened o = open_tiny("rewrite_afmoe", tiny("afmoe", t));
  Plan d = lora_plan(o, 16, kDefault, false);
  EXPECT_EQ(d.lora->modules, 6u);
  EXPECT_EQ(d.trainable, 16 * kAttention + 32 * kGateUp + 16 * kDown);
  Plan al = lora_plan(o, 8, kAllLinear, false);
  EXPECT_EQ(al.lora->modules, 7u);
  EXPECT_EQ(al.trainable, 8 * (kAttention + kH + 4) + 16 * kGateUp + 8 * kDown);
}

bool has_parameter(const Plan& p, const std::string& name) {
  const auto& paths = p.model.parameter_paths;
  return std::find(paths.begin(), paths.end(), name) != paths.end();
}

// Original (hub) layouts transformers 5.17 converts at load, one per kind of step. Granite MoE
// keeps its experts fused as input_linear/output_linear and its router as an nn.Linear inside
// router.layer: loaded, they are the experts' gate_up_proj/down_proj and a TopKRouter.
TEST(PlanHubLayouts, GraniteMoeInputLinearIsTheExpertsAndItsRouterIsNotLinear) {
  const std::string b = "model.layers.0.block_sparse_moe.";
  Opened o = open_tiny("hub_granitemoe",
                       tiny("granitemoe", {{b + "input_linear.weight", "BF16", {4, 16, kH}},
                                           {b + "output_linear.weight", "BF16", {4, kH, 8}},
                                           {b + "router.layer.weight", "BF16", {4, kH}}}));
  Plan e = lora_plan(o, 32, kDefault, true);
  EXPECT_TRUE(has_parameter(e, b + "experts.gate_up_proj"));
  EXPECT_EQ(e.lora->modules, 6u);
  EXPECT_EQ(e.trainable, 32 * (kAttention + 4 * (16 + kH) + 4 * (kH + 8)));
  EXPECT_EQ(lora_plan(o, 8, kAllLinear, false).lora->modules, 4u);
}

// HRM-Text's gqkv_proj is four nn.Linear once loaded (gate, q, k, v), its gate_up_proj two.
TEST(PlanHubLayouts, HrmTextFusedProjectionsAreSplitIntoTheLinearsPeftTargets) {
  const std::string l = "model.layers.1.";
  Opened o =
      open_tiny("hub_hrm", tiny("hrm_text", {{l + "attn.gqkv_proj.weight", "BF16", {4 * kH, kH}},
                                             {l + "attn.o_proj.weight", "BF16", {kH, kH}},
                                             {l + "mlp.gate_up_proj.weight", "BF16", {2 * kH, kH}},
                                             {l + "mlp.down_proj.weight", "BF16", {kH, kH}}}));
  Plan p = lora_plan(o, 8, kDefault, false);
  EXPECT_TRUE(has_parameter(p, l + "self_attn.gate_proj.weight"));
  EXPECT_EQ(p.lora->modules, 4u + 8u);
  EXPECT_EQ(p.trainable, 12 * 8 * 2 * kH);
  EXPECT_EQ(p.total_params, kTinyParams + 8 * kH * kH);
}

// MiniMax-M3 loads its shared expert's gate_proj and up_proj as one gate_up_proj nn.Linear, so
// the default targets adapt only its down_proj.
TEST(PlanHubLayouts, MiniMaxM3SharedGateAndUpAreFusedIntoOneLinear) {
  ModelFixture m;
  m.config = R"({"model_type":"minimax_m3_vl","tie_word_embeddings":false,
      "text_config":{"model_type":"minimax_m3_vl_text","hidden_size":16,"vocab_size":64}})";
  const std::string s = "language_model.model.layers.0.block_sparse_moe.shared_experts.";
  m.tensors = {{"language_model.model.embed_tokens.weight", "BF16", {kV, kH}},
               {s + "gate_proj.weight", "BF16", {8, kH}},
               {s + "up_proj.weight", "BF16", {8, kH}},
               {s + "down_proj.weight", "BF16", {kH, 8}},
               {"language_model.lm_head.weight", "BF16", {kV, kH}}};
  Opened o = open_tiny("hub_minimax_m3", m);
  Plan d = lora_plan(o, 8, kDefault, false);
  EXPECT_EQ(d.lora->modules, 1u);
  EXPECT_EQ(d.trainable, 8 * (kH + 8));
  Plan al = lora_plan(o, 8, kAllLinear, false);
  EXPECT_EQ(al.lora->modules, 2u);
  EXPECT_EQ(al.trainable, 8 * (kH + 16 + kH + 8));
  EXPECT_TRUE(
      has_parameter(al, "model.language_model.layers.0.mlp.shared_experts.gate_up_proj.weight"));
}

// Inkling's vision layers are numbered inside their names (linear_3) and its shared experts'
// w13 is split along its second dimension into gate_proj and up_proj.
TEST(PlanHubLayouts, InklingNumberedNamesMoveAndSharedW13Splits) {
  ModelFixture m;
  m.config = R"({"model_type":"inkling_mm_model","text_config":{"model_type":"inkling_text",
      "hidden_size":16,"vocab_size":64}})";
  m.tensors = {{"model.llm.embed.weight", "BF16", {kV, kH}},
               {"model.llm.layers.0.attn.wq_du.weight", "BF16", {kH, kH}},
               {"model.llm.layers.0.mlp.shared_experts.shared_w13_weight", "BF16", {2, 16, kH}},
               {"model.llm.unembed.weight", "BF16", {kV, kH}},
               {"model.visual.layers.linear_3.weight", "BF16", {8, 8}}};
  Plan p = full_plan(open_tiny("hub_inkling", m));
  for (const char* name : {"model.language_model.embed_tokens.weight",
                           "model.language_model.layers.0.self_attn.q_proj.weight",
                           "model.language_model.layers.0.mlp.shared_experts.gate_proj",
                           "model.language_model.layers.0.mlp.shared_experts.up_proj",
                           "model.vision_tower.encoder_layers.3.projection.weight"}) {
    EXPECT_TRUE(has_parameter(p, name)) << name;
  }
  EXPECT_EQ(p.model.output_head, "lm_head");
  EXPECT_EQ(p.total_params, 2 * kV * kH + kH * kH + 2 * 16 * kH + 64);
}

// ERNIE-4.5-VL's checkpoint keeps text and vision experts in one list (the first
// moe_num_experts are text) and its routers transposed; Step 3.7 keeps the experts' gate_proj and
// up_proj as two 3-D weights, fused along their second dimension at load.
TEST(PlanHubLayouts, ErnieVlExpertsSplitByModalityAndStep3p7ExpertsFuse) {
  ModelFixture ernie;
  ernie.config = R"({"model_type":"ernie4_5_vl_moe","text_config":{
      "model_type":"ernie4_5_vl_moe_text","hidden_size":16,"vocab_size":64,"moe_num_experts":2,
      "tie_word_embeddings":true}})";
  ernie.tensors = {{"model.embed_tokens.weight", "BF16", {kV, kH}},
                   {"model.layers.0.mlp.gate.weight", "BF16", {kH, 2}},
                   {"model.layers.0.mlp.gate.weight_1", "BF16", {kH, 2}}};
  for (int e = 0; e < 4; ++e) {
    std::string x = "model.layers.0.mlp.experts." + std::to_string(e) + ".";
    uint64_t inter = e < 2 ? 8 : 4;
    ernie.tensors.push_back({x + "gate_proj.weight", "BF16", {inter, kH}});
    ernie.tensors.push_back({x + "up_proj.weight", "BF16", {inter, kH}});
    ernie.tensors.push_back({x + "down_proj.weight", "BF16", {kH, inter}});
  }
  Plan ep = lora_plan(open_tiny("hub_ernie_vl", ernie), 32, {"q_proj"}, true);
  std::vector<std::string> adapted;
  for (const auto& a : ep.lora->adapted) adapted.push_back(a.name);
  const std::string l = "model.language_model.layers.0.mlp.";
  EXPECT_EQ(adapted,
            (std::vector<std::string>{
                l + "text_moe.experts.down_proj", l + "text_moe.experts.gate_up_proj",
                l + "vision_moe.experts.down_proj", l + "vision_moe.experts.gate_up_proj"}));
  EXPECT_EQ(ep.trainable, 32 * 2 * ((kH + 8) + (16 + kH) + (kH + 4) + (8 + kH)));

  const std::string x = "model.layers.0.";
  Opened step = open_tiny(
      "hub_step3p7", tiny("step3p7", {{x + "moe.gate_proj.weight", "BF16", {4, 8, kH}},
                                      {x + "moe.up_proj.weight", "BF16", {4, 8, kH}},
                                      {x + "moe.down_proj.weight", "BF16", {4, kH, 8}},
                                      {x + "moe.gate.weight", "BF16", {4, kH}},
                                      {x + "moe.router_bias", "F32", {4}},
                                      {x + "share_expert.gate_proj.weight", "BF16", {8, kH}}}));
  Plan sp = lora_plan(step, 32, {"gate_proj"}, true);
  EXPECT_TRUE(has_parameter(sp, "model.language_model.layers.0.mlp.experts.gate_up_proj"));
  EXPECT_EQ(sp.lora->modules, 3u);
  EXPECT_EQ(sp.trainable, 32 * ((8 + kH) + 4 * (16 + kH) + 4 * (kH + 8)));
}

// DeepSeek-V4's ffn.gate.bias is the router's e_score_correction_bias once loaded (a buffer). A
// checkpoint already in transformers 5's layout is left as it is: Kimi-K2.5's v5 vision fc1
// stays fc1 (its original layout's fc0 becomes fc1 only there).
TEST(PlanHubLayouts, OnlyACheckpointInTheOriginalLayoutIsConverted) {
  Plan v4 = full_plan(
      open_tiny("hub_deepseek_v4",
                tiny("deepseek_v4", {{"model.layers.0.ffn.gate.bias", "F32", {8}},
                                     {"model.layers.0.ffn.gate.weight", "BF16", {8, kH}}})));
  EXPECT_EQ(v4.total_params, kTinyParams + 8 * kH);
  EXPECT_TRUE(has_parameter(v4, "model.layers.0.mlp.gate.weight"));

  std::vector<WriteTensor> fc{{"model.vision_tower.layers.0.mlp.fc1.weight", "BF16", {8, kH}}};
  Plan v5 = full_plan(open_tiny("v5_kimi_k25", tiny("kimi_k25", fc)));
  EXPECT_TRUE(has_parameter(v5, "model.vision_tower.layers.0.mlp.fc1.weight"));
  ModelFixture hub =
      tiny("kimi_k25", {{"vision_tower.encoder.blocks.0.mlp.fc0.weight", "BF16", {8, kH}},
                        {"language_model.model.norm.weight", "BF16", {kH}}});
  Plan h = full_plan(open_tiny("hub_kimi_k25", hub));
  EXPECT_TRUE(has_parameter(h, "model.vision_tower.layers.0.mlp.fc1.weight"));
}

// PEFT 0.21 raises on every LoRA of PPFormulaNet (its model has no get_input_embeddings()).
TEST(PlanPeftRefuses, PpFormulaNetCannotBeWrappedByPeft) {
  Opened o = open_tiny("refuse_pp_formulanet", tiny("pp_formulanet", {}));
  EXPECT_NE(lora_refusal(o, 16, kDefault).find("get_input_embeddings"), std::string::npos);
  EXPECT_EQ(full_plan(o).total_params, kTinyParams);
}

}  // namespace
}  // namespace sparkdoc::plan
