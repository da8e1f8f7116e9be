# find_package(Basalt) gives Basalt::basalt.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

install(DIRECTORY core algorithms backends DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/basalt
        FILES_MATCHING PATTERN "*.hpp")
install(TARGETS ${basalt_targets} EXPORT BasaltTargets)
install(EXPORT BasaltTargets NAMESPACE Basalt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Basalt)
get_filename_component(BASALT_LAPACKE_LIBRARY_DIR ${BASALT_LAPACKE_LIBRARY} DIRECTORY)
configure_package_config_file(cmake/BasaltConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/BasaltConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Basalt)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/BasaltConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/BasaltConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/BasaltConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Basalt)
