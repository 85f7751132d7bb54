/* A stand-in for a CUDA library: only its soname matters to the tests. */
int fake_library_entry(void) { return 1; }
