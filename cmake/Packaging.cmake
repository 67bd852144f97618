# Install rules and the Debian package (CPack DEB): `make package` builds
# build/release/package/abacus_VERSION_ARCH.deb. What goes where: docs/operations.md,
# "Installing the package". The .deb is the supported way to install; the absolute destinations
# (/etc, /lib/systemd) ignore CMAKE_INSTALL_PREFIX, so `cmake --install` needs DESTDIR.

set(ABACUS_PACKAGING_DIR ${CMAKE_CURRENT_SOURCE_DIR}/packaging)

install(TARGETS abacus RUNTIME DESTINATION bin)
# The full binary the lean client execs for the server, agent, simulator and other verbs.
install(TARGETS abacus-core RUNTIME DESTINATION lib/abacus)
install(FILES ${ABACUS_PACKAGING_DIR}/abacus-server.service ${ABACUS_PACKAGING_DIR}/abacus-agent.service
        DESTINATION /lib/systemd/system)
install(FILES ${ABACUS_PACKAGING_DIR}/server.yaml ${ABACUS_PACKAGING_DIR}/agent.yaml DESTINATION /etc/abacus)
install(FILES ${ABACUS_PACKAGING_DIR}/copyright README.md DESTINATION share/doc/abacus)
install(DIRECTORY docs/ DESTINATION share/doc/abacus FILES_MATCHING PATTERN "*.md" PATTERN "*.png" PATTERN "*.svg")
# Shell completion, generated from the installed commands themselves (`abacus completion bash|zsh`),
# where the shells load it on demand: bash-completion from /usr/share/bash-completion/completions,
# Debian's zsh from /usr/share/zsh/vendor-completions (in its default $fpath).
install(CODE [[
  foreach(shell_dir_file IN ITEMS "bash;share/bash-completion/completions;abacus" "zsh;share/zsh/vendor-completions;_abacus")
    list(GET shell_dir_file 0 shell)
    list(GET shell_dir_file 1 sub)
    list(GET shell_dir_file 2 name)
    set(dir "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${sub}")
    file(MAKE_DIRECTORY "${dir}")
    execute_process(COMMAND "$<TARGET_FILE:abacus>" completion ${shell} OUTPUT_FILE "${dir}/${name}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "abacus completion ${shell} failed (${rc})")
    endif()
    message(STATUS "Installing: ${dir}/${name} (abacus completion ${shell})")
  endforeach()
]])
# `abacus up --demo` finds its examples next to the binary, in ../share/abacus/examples.
install(DIRECTORY examples/ DESTINATION share/abacus/examples)
# Monitoring that ships: Prometheus alerting rules and a Grafana dashboard (docs/metrics.md).
install(FILES ${ABACUS_PACKAGING_DIR}/prometheus/abacus-rules.yaml DESTINATION share/abacus/prometheus)
install(FILES ${ABACUS_PACKAGING_DIR}/grafana/abacus.json DESTINATION share/abacus/grafana)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME abacus)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The Abacus authors")
set(CPACK_PACKAGE_CONTACT "Abacus maintainers <abacus@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "heterogeneous compute ledger and scheduler for GPUs, NPUs and CPUs")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "Abacus puts every GPU, NPU and CPU of your clusters into one ledger and lets training, inference, batch, "
    "evaluation and experiment workloads use them by rules: queues, quotas with borrowing and reclaim, priorities "
    "and preemption. It explains every decision with numbers. This package holds the abacus command (client "
    "verbs; it runs lib/abacus/abacus-core, the server, agent and simulator, for the rest), systemd units "
    "abacus-server and abacus-agent, and their settings in /etc/abacus.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/package)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Library dependencies from dpkg-shlibdeps, plus adduser for the postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libpq5 by name: the binary opens it with dlopen (src/store/postgres/libpq.h), so
# dpkg-shlibdeps does not see it.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libpq5 (>= 14)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "sqlite3")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${ABACUS_PACKAGING_DIR}/debian/postinst ${ABACUS_PACKAGING_DIR}/debian/prerm
    ${ABACUS_PACKAGING_DIR}/debian/postrm ${ABACUS_PACKAGING_DIR}/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
