/* A library that needs the fake CUDA libraries, as torch/lib's objects need the real ones.
   It calls into them so that linkers defaulting to --as-needed keep the DT_NEEDED entries. */
int fake_library_entry(void);

int fake_consumer_entry(void) { return fake_library_entry(); }
