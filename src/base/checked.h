/* IL_CHECKED_BUILD: 1 in builds with AddressSanitizer, where the engine trades speed for
 * checks of its own (freed strings never reused, cached programs cross-checked). */
#ifndef IL_BASE_CHECKED_H
#define IL_BASE_CHECKED_H

#if defined(__SANITIZE_ADDRESS__)
#define IL_CHECKED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IL_CHECKED_BUILD 1
#endif
#endif
#ifndef IL_CHECKED_BUILD
#define IL_CHECKED_BUILD 0
#endif

#endif
