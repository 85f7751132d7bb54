
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
