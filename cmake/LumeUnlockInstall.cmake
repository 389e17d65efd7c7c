# What `cmake --install` puts under the prefix besides the binary (provisioner/cli), its
# completions (provisioner/cli) and the shim bundle (shim/bundle):
#   share/lume-unlock/image-recipes/   the shipped recipes
#   share/lume-unlock/perplexity-text.txt  the text of bench's llama-perplexity runs
#   share/doc/lume-unlock/             the README, the LICENSE (MIT) and report.json's JSON Schema
# Nothing test-only is installed: lume-sim, guest-sim, fixtures and benches have no install rules.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/image-recipes/"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/lume-unlock/image-recipes"
  FILES_MATCHING PATTERN "*.yaml" PATTERN "*.md")
install(FILES "${PROJECT_SOURCE_DIR}/README.md" "${PROJECT_SOURCE_DIR}/LICENSE"
  "${PROJECT_SOURCE_DIR}/provisioner/report/report.schema.json"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}")
# The text bench's llama-perplexity runs read (compiled in; installed for a host's own run).
install(FILES "${PROJECT_SOURCE_DIR}/provisioner/verify/perplexity-text.txt"
  DESTINATION "${CMAKE_INSTALL_DATADIR}/lume-unlock")
