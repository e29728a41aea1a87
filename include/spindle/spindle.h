// Everything a game needs, in one include: the engine, the world, transforms, timers, input,
// logging and the job system. Link the CMake target spindle::spindle.
//
// Usage: see samples/hello/hello.cpp, a whole game in one file.
#pragma once

#include <spindle/core/engine.h>
#include <spindle/core/input.h>
#include <spindle/core/log.h>
#include <spindle/core/timer.h>
#include <spindle/core/transform.h>
#include <spindle/core/world.h>
#include <spindle/jobs/job_system.h>
