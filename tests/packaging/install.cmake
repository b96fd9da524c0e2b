# cmake -DBINARY_DIR=<segred build> -DPREFIX=<dir> -P install.cmake
# A fresh install of segred into PREFIX, for the packaging tests.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(
    COMMAND "${CMAKE_COMMAND}" --install "${BINARY_DIR}" --prefix "${PREFIX}"
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
foreach(f include/segred/segred.hpp)
    if(NOT EXISTS "${PREFIX}/${f}")
        message(FATAL_ERROR "install is missing ${f}")
    endif()
endforeach()
file(GLOB_RECURSE config "${PREFIX}/*/segredConfig.cmake")
if(NOT config)
    message(FATAL_ERROR "install is missing segredConfig.cmake")
endif()
