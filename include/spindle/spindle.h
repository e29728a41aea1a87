// Everything a game needs, in one include: the engine, the world, transforms, timers, input,
// logging, settings (INI files and --set overrides), reading files safely, crash reports, the job
// system, and every plugin this build of the engine has (the window and input devices, rendering,
// physics and the swarm system, animation, audio). Link the CMake target spindle::spindle.
//
// spindle::spindle defines SPINDLE_HAS_PLATFORM, SPINDLE_HAS_RENDER, SPINDLE_HAS_PHYSICS,
// SPINDLE_HAS_ANIM and SPINDLE_HAS_AUDIO to 1 for each plugin it links and to 0 for each one the
// engine was built without, so this header includes only what exists; code that is not built
// through the target gets core and jobs only. The asset importer (spindle::anim_import,
// <spindle/anim/import.h>) is left out: it needs assimp, and only tools that load files want it.
//
// Usage: see samples/README.md, one short program per feature, and samples/hello/hello.cpp, a
// whole game in one file.
#pragma once

#include <spindle/base/config.h>
#include <spindle/base/crash.h>
#include <spindle/base/file.h>
#include <spindle/base/log.h>
#include <spindle/ecs/world.h>
#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/gameplay/input_record.h>
#include <spindle/gameplay/timer.h>
#include <spindle/gameplay/transform.h>
#include <spindle/jobs/job_system.h>

#if SPINDLE_HAS_PLATFORM
#include <spindle/platform/devices.h>
#include <spindle/platform/paths.h>
#include <spindle/platform/run.h>
#include <spindle/platform/window.h>
#endif
#if SPINDLE_HAS_RENDER
#include <spindle/render/camera.h>
#include <spindle/render/debug_draw.h>
#include <spindle/render/draw_list.h>
#include <spindle/render/image.h>
#include <spindle/render/lod.h>
#include <spindle/render/mesh.h>
#include <spindle/render/ot_renderer.h>
#include <spindle/render/render_plugin.h>
#include <spindle/render/renderer.h>
#include <spindle/render/texture.h>
#endif
#if SPINDLE_HAS_PHYSICS
#include <spindle/physics/physics.h>
#include <spindle/physics/swarm.h>
#endif
#if SPINDLE_HAS_AUDIO
#include <spindle/audio/audio_plugin.h>
#include <spindle/audio/sound.h>
#endif
#if SPINDLE_HAS_ANIM
#include <spindle/anim/animation_plugin.h>
#include <spindle/anim/clip_bank.h>
#include <spindle/anim/float_track.h>
#include <spindle/anim/ik_job.h>
#include <spindle/anim/keyframe_optimizer.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/root_motion.h>
#include <spindle/anim/soa_pose.h>
#endif
