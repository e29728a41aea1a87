// Everything a game needs, in one include: the engine, the world, transforms, timers, input,
// logging and the job system. Link the CMake target spindle::spindle.
//
// Usage: see samples/hello/hello.cpp, a whole game in one file.
#pragma once

#include <spindle/base/log.h>
#include <spindle/ecs/world.h>
#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/gameplay/timer.h>
#include <spindle/gameplay/transform.h>
#include <spindle/jobs/job_system.h>
