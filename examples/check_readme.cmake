# cmake -DREADME=<README.md> -DSAMPLE=<quickstart.cpp> -P check_readme.cmake
# Fails unless README.md quotes the quickstart sample verbatim, so the code
# the README shows is the code the build compiles and runs.
file(READ "${README}" readme)
file(READ "${SAMPLE}" sample)
string(FIND "${readme}" "${sample}" at)
if(at EQUAL -1)
    message(FATAL_ERROR "README.md no longer quotes ${SAMPLE} verbatim; copy the file into its quickstart block")
endif()
