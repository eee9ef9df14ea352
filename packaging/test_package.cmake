# Builds the .deb with CPack, unpacks it with dpkg -x into a scratch root, checks what it holds,
# and runs kernelforge-cli from there: it must find the packaged problems and example sessions
# next to itself. Run by CTest as test_package:
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWITH_GUI=ON|OFF -P test_package.cmake
set(work ${BUILD_DIR}/package-test)
file(REMOVE_RECURSE ${work})
file(MAKE_DIRECTORY ${work})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err WORKING_DIRECTORY ${work})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_CPACK_COMMAND} -G DEB -B ${work}/out --config ${BUILD_DIR}/CPackConfig.cmake)
file(GLOB debs ${work}/out/*.deb)
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one .deb in ${work}/out, found: ${debs}")
endif()
run(dpkg-deb --field ${debs} Package Version Depends)
message(STATUS "package fields:\n${out}")
foreach(dep libqt6widgets6 libsqlite3-0)
  if(WITH_GUI OR NOT dep MATCHES "qt6")
    string(FIND "${out}" "${dep}" at)
    if(at LESS 0)
      message(FATAL_ERROR "the package does not depend on ${dep}")
    endif()
  endif()
endforeach()

set(root ${work}/root)
run(dpkg -x ${debs} ${root})
set(expected usr/bin/kernelforge-cli usr/bin/kernelforge-worker usr/share/kernelforge/problems/seed/softmax.toml
    usr/share/kernelforge/examples/softmax.kfsession usr/share/kernelforge/templates/softmax_online.cu
    usr/share/kernelforge/templates/parts/hopper_pipeline.cuh)
if(WITH_GUI)
  list(APPEND expected usr/bin/kernelforge usr/share/applications/kernelforge.desktop
       usr/share/metainfo/io.github.kernelforge.KernelForge.metainfo.xml usr/share/mime/packages/kernelforge.xml
       usr/share/icons/hicolor/scalable/apps/kernelforge.svg usr/share/icons/hicolor/256x256/apps/kernelforge.png)
endif()
foreach(f ${expected})
  if(NOT EXISTS ${root}/${f})
    message(FATAL_ERROR "the package lacks /${f}")
  endif()
endforeach()

# From outside any source tree and without KERNELFORGE_PROBLEMS: the CLI uses the problems
# installed next to it.
run(${CMAKE_COMMAND} -E env --unset=KERNELFORGE_PROBLEMS --unset=KERNELFORGE_WORKER ${root}/usr/bin/kernelforge-cli problems)
string(FIND "${out}" "${root}/usr/share/kernelforge/problems" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "kernelforge-cli problems did not list the packaged problems first:\n${out}")
endif()
string(FIND "${out}" "softmax" at)
if(at LESS 0)
  message(FATAL_ERROR "kernelforge-cli problems did not list softmax:\n${out}")
endif()
run(${root}/usr/bin/kernelforge-cli report ${root}/usr/share/kernelforge/examples/softmax.kfsession)
string(FIND "${out}" "softmax on NVIDIA H200" at)
if(at LESS 0)
  message(FATAL_ERROR "kernelforge-cli report of the packaged example:\n${out}")
endif()

if(WITH_GUI)
  find_program(APPSTREAMCLI appstreamcli)
  if(APPSTREAMCLI)
    run(${APPSTREAMCLI} validate --no-net ${root}/usr/share/metainfo/io.github.kernelforge.KernelForge.metainfo.xml)
  else()
    message(STATUS "appstreamcli is not installed: the metainfo was not validated")
  endif()
endif()
message(STATUS "package test passed: ${debs}")
